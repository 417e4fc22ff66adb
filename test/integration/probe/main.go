// A tiny in-cluster probe for the real-node smoke test (standard library
// only, built static): every two seconds it logs what its pod sees — the
// mounted config file, a Service resolved through the cluster DNS, the API
// server reached through the `kubernetes` Service, whether the pod has a
// default route — and it serves "probe ok" on :8080 (readiness,
// port-forward). `probe cat FILE` prints a file, for `kubectl exec`.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

const serviceAccount = "/var/run/secrets/kubernetes.io/serviceaccount"

func main() {
	if len(os.Args) == 3 && os.Args[1] == "cat" {
		data, err := os.ReadFile(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Stdout.Write(data)
		return
	}
	go func() {
		http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "probe ok") })
		if err := http.ListenAndServe(":8080", nil); err != nil {
			fmt.Println("serve:", err)
			os.Exit(1)
		}
	}()
	for {
		report()
		time.Sleep(2 * time.Second)
	}
}

func report() {
	if config, err := os.ReadFile(os.Getenv("CONFIG_FILE")); err == nil {
		fmt.Printf("config: %s\n", strings.TrimSpace(string(config)))
	} else {
		fmt.Println("config error:", err)
	}
	name := os.Getenv("LOOKUP")
	if addrs, err := net.LookupHost(name); err == nil {
		fmt.Printf("dns %s: %s\n", name, strings.Join(addrs, ","))
	} else {
		fmt.Printf("dns %s error: %v\n", name, err)
	}
	fmt.Println("api:", apiStatus())
	fmt.Println("default route:", hasDefaultRoute())
}

// hasDefaultRoute reports whether /proc/net/route has a 0.0.0.0/0 entry.
func hasDefaultRoute() bool {
	routes, _ := os.ReadFile("/proc/net/route")
	for _, line := range strings.Split(string(routes), "\n")[1:] {
		fields := strings.Fields(line)
		if len(fields) > 7 && fields[1] == "00000000" && fields[7] == "00000000" {
			return true
		}
	}
	return false
}

// apiStatus GETs /api from the API server by the kubernetes Service's DNS
// name, with the pod's service-account token and CA, as any in-cluster client.
func apiStatus() string {
	ca, err := os.ReadFile(serviceAccount + "/ca.crt")
	if err != nil {
		return err.Error()
	}
	token, err := os.ReadFile(serviceAccount + "/token")
	if err != nil {
		return err.Error()
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest("GET", "https://kubernetes.default.svc/api", nil)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	res, err := client.Do(req)
	if err != nil {
		return err.Error()
	}
	res.Body.Close()
	return fmt.Sprint(res.StatusCode)
}
