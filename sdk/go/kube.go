// A minimal Kubernetes API client, as the pod (docs/worker-protocol.md §2): the
// ServiceAccount's token and CA, the API server from KUBERNETES_SERVICE_HOST and
// _PORT. The token is read again every minute: the kubelet rotates it.
package swarmworker

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// DefaultServiceAccountDir is where a pod's token, CA and namespace are mounted.
const DefaultServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// APIError is a refused or failed request; Code is the HTTP status (0: no answer).
type APIError struct {
	Code    int
	Message string
}

func (e *APIError) Error() string { return e.Message }

// StatusOf is err's HTTP status, 0 when there was no answer.
func StatusOf(err error) int {
	if e, ok := err.(*APIError); ok {
		return e.Code
	}
	return 0
}

// Kube is the client: JSON in, JSON out.
type Kube struct {
	base   string
	dir    string
	client *http.Client
	mu     sync.Mutex
	token  string
	readAt time.Time
}

// InCluster makes a client from the mounted credentials; host and port default to the environment's.
func InCluster(serviceAccountDir, host, port string) (*Kube, error) {
	if serviceAccountDir == "" {
		serviceAccountDir = DefaultServiceAccountDir
	}
	if host == "" {
		host = os.Getenv("KUBERNETES_SERVICE_HOST")
	}
	if port == "" {
		port = os.Getenv("KUBERNETES_SERVICE_PORT")
	}
	if host == "" {
		return nil, fmt.Errorf("KUBERNETES_SERVICE_HOST is not set")
	}
	if port == "" {
		port = "443"
	}
	ca, err := os.ReadFile(filepath.Join(serviceAccountDir, "ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("no certificate in %s", filepath.Join(serviceAccountDir, "ca.crt"))
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	k := &Kube{base: "https://" + net.JoinHostPort(host, port), dir: serviceAccountDir, client: &http.Client{Transport: transport, Timeout: 10 * time.Second}}
	if _, err := k.bearer(); err != nil {
		return nil, err
	}
	return k, nil
}

func (k *Kube) bearer() (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if time.Since(k.readAt) > time.Minute {
		b, err := os.ReadFile(filepath.Join(k.dir, "token"))
		if err != nil {
			return "", err
		}
		k.token, k.readAt = strings.TrimSpace(string(b)), time.Now()
	}
	return k.token, nil
}

// Do sends body (if not nil) and decodes the answer into out (if not nil).
func (k *Kube) Do(ctx context.Context, method, path string, body, out any) error {
	var payload io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		payload = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, k.base+path, payload)
	if err != nil {
		return err
	}
	token, err := k.bearer()
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := k.client.Do(req)
	if err != nil {
		return &APIError{Code: 0, Message: fmt.Sprintf("%s %s: %v", method, path, err)}
	}
	defer res.Body.Close()
	text, _ := io.ReadAll(res.Body)
	if res.StatusCode < 200 || res.StatusCode > 299 {
		var status struct{ Message string }
		msg := string(text)
		if json.Unmarshal(text, &status) == nil && status.Message != "" {
			msg = status.Message
		}
		return &APIError{Code: res.StatusCode, Message: fmt.Sprintf("%s %s: %d: %s", method, path, res.StatusCode, msg)}
	}
	if out != nil {
		return json.Unmarshal(text, out)
	}
	return nil
}

// MountedNamespace is the namespace of the mounted ServiceAccount, "" if none.
func MountedNamespace(serviceAccountDir string) string {
	if serviceAccountDir == "" {
		serviceAccountDir = DefaultServiceAccountDir
	}
	b, err := os.ReadFile(filepath.Join(serviceAccountDir, "namespace"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
