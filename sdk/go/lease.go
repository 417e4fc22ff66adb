// The acknowledgement (docs/worker-protocol.md §4): the pod's Lease says which
// config version it applied and which jobs run. Written only when that
// changes, guarded by resourceVersion; conflicts, throttling, server errors and
// no answer are retried with backoff; a refusal (403, 422) is returned.
package swarmworker

import (
	"context"
	"net/url"
	"regexp"
	"strconv"
	"sync"
	"time"
)

// The protocol's names (lib/workerconfig/acknowledgement.ts).
const (
	SwarmLabel         = "k8slab.info/swarm"
	VersionAnnotation  = "k8slab.info/config-version"
	DigestAnnotation   = "k8slab.info/jobs-digest"
	LoadedAtAnnotation = "k8slab.info/loaded-at"
	ProtocolAnnotation = "k8slab.info/worker-protocol"
	HandoverAnnotation = "k8slab.info/handover"
	HandoverValue      = "MakeBeforeBreak"
	// FencedAnnotation: the worker stopped its jobs on a fence and runs none until its share is empty (protocol 2).
	FencedAnnotation = "k8slab.info/fenced"
	FencedValue      = "true"
	// Protocol is what a worker announces without failover.yml (protocol 1); with it, FailoverProtocol.
	Protocol = "1"
)

// Lease is a coordination.k8s.io/v1 Lease, its unknown fields kept as they were read.
type Lease map[string]any

// LeaseAPI is the three calls the acknowledger makes; a Kube gives them, tests give a fake.
type LeaseAPI interface {
	Read(ctx context.Context, namespace, name string) (Lease, error) // nil, nil when absent
	Create(ctx context.Context, namespace string, lease Lease) error
	Replace(ctx context.Context, namespace string, lease Lease) error // 409 unless resourceVersion is current
}

type kubeLeases struct{ k *Kube }

func leasesPath(namespace string) string {
	return "/apis/coordination.k8s.io/v1/namespaces/" + url.PathEscape(namespace) + "/leases"
}

func (l kubeLeases) Read(ctx context.Context, namespace, name string) (Lease, error) {
	var out Lease
	err := l.k.Do(ctx, "GET", leasesPath(namespace)+"/"+url.PathEscape(name), nil, &out)
	if StatusOf(err) == 404 {
		return nil, nil
	}
	return out, err
}

func (l kubeLeases) Create(ctx context.Context, namespace string, lease Lease) error {
	return l.k.Do(ctx, "POST", leasesPath(namespace), lease, nil)
}

func (l kubeLeases) Replace(ctx context.Context, namespace string, lease Lease) error {
	name, _ := field(lease, "metadata")["name"].(string)
	return l.k.Do(ctx, "PUT", leasesPath(namespace)+"/"+url.PathEscape(name), lease, nil)
}

// Leases is the LeaseAPI over a Kube.
func (k *Kube) Leases() LeaseAPI { return kubeLeases{k} }

func field(m map[string]any, name string) map[string]any {
	if v, ok := m[name].(map[string]any); ok {
		return v
	}
	return map[string]any{}
}

// Acknowledgement is what the Lease is to say.
type Acknowledgement struct {
	Version  int
	Jobs     []string
	Protocol string // "" reads as Protocol (1)
	Fenced   bool   // waiting, fenced, for an empty share: FencedAnnotation, dropped when it resumes
}

func (a Acknowledgement) protocol() string {
	if a.Protocol == "" {
		return Protocol
	}
	return a.Protocol
}

// leaseWith is current (nil: none yet) as a Lease named name in namespace, with these labels, annotations and spec
// fields set over the ones it had: fields its writer does not own are kept.
func leaseWith(current Lease, name, namespace string, labels, annotations, spec map[string]any) Lease {
	merged := func(base map[string]any, over map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range over {
			out[k] = v
		}
		return out
	}
	out := merged(current, map[string]any{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease"})
	meta := merged(field(current, "metadata"), map[string]any{"name": name, "namespace": namespace})
	meta["labels"] = merged(field(meta, "labels"), labels)
	meta["annotations"] = merged(field(meta, "annotations"), annotations)
	out["metadata"] = meta
	out["spec"] = merged(field(current, "spec"), spec)
	return out
}

// LeaseFor is the Lease after acknowledging ack, from current (nil: none yet); fields it does not own are kept.
func LeaseFor(pod, podUID, namespace, pool string, ack Acknowledgement, loadedAt time.Time, current Lease) Lease {
	lease := leaseWith(current, pod, namespace, map[string]any{SwarmLabel: pool}, map[string]any{
		VersionAnnotation:  strconv.Itoa(ack.Version),
		DigestAnnotation:   JobsDigest(ack.Jobs),
		LoadedAtAnnotation: loadedAt.UTC().Format(time.RFC3339Nano),
		ProtocolAnnotation: ack.protocol(),
		FencedAnnotation:   FencedValue,
	}, map[string]any{"holderIdentity": podUID})
	if !ack.Fenced {
		delete(field(lease, "metadata")["annotations"].(map[string]any), FencedAnnotation)
	}
	return lease
}

// AlreadySays is true when lease says ack, held by podUID, written by this process (loaded at or after since, its
// first acknowledgement). One an earlier run of the pod wrote is written again: Swarm voids an acknowledgement
// loaded before the pod's containers last started.
func AlreadySays(lease Lease, podUID string, ack Acknowledgement, since time.Time) bool {
	if lease == nil {
		return false
	}
	a := field(field(lease, "metadata"), "annotations")
	loaded, _ := a[LoadedAtAnnotation].(string)
	at, err := time.Parse(time.RFC3339Nano, loaded)
	return err == nil && !at.Before(since) && field(lease, "spec")["holderIdentity"] == podUID && a[VersionAnnotation] == strconv.Itoa(ack.Version) &&
		a[DigestAnnotation] == JobsDigest(ack.Jobs) && a[ProtocolAnnotation] == ack.protocol() && (a[FencedAnnotation] == FencedValue) == ack.Fenced
}

var ordinalSuffix = regexp.MustCompile(`^(.+)-(0|[1-9][0-9]*)$`)

// PoolOf is the pool's name: given, else a StatefulSet pod's name less its ordinal.
func PoolOf(pod, given string) string {
	if given != "" {
		return given
	}
	if m := ordinalSuffix.FindStringSubmatch(pod); m != nil {
		return m[1]
	}
	return ""
}

func transient(status int) bool {
	return status == 0 || status == 409 || status == 429 || status >= 500
}

// Acknowledger writes acknowledgements one at a time; of those queued behind one in flight only the newest is written.
type Acknowledger struct {
	API                          LeaseAPI
	Pod, PodUID, Namespace, Pool string
	Attempts                     int           // default 8
	Backoff                      time.Duration // default 200 ms, doubling, at most 5 s
	Now                          func() time.Time

	mu     sync.Mutex
	write  sync.Mutex
	latest *Acknowledgement
	since  time.Time // the first acknowledgement's time: what this process wrote is loaded at or after it
}

// Acknowledge returns once the Lease says ack (or a newer call superseded it), or with the error that ended the tries.
func (a *Acknowledger) Acknowledge(ctx context.Context, ack Acknowledgement) error {
	mine := &ack
	a.mu.Lock()
	a.latest = mine
	a.mu.Unlock()
	a.write.Lock()
	defer a.write.Unlock()
	attempts, backoff, now := a.Attempts, a.Backoff, a.Now
	if attempts == 0 {
		attempts = 8
	}
	if backoff == 0 {
		backoff = 200 * time.Millisecond
	}
	if now == nil {
		now = time.Now
	}
	loadedAt := now()
	if a.since.IsZero() {
		a.since = loadedAt
	}
	for attempt := 1; ; attempt++ {
		a.mu.Lock()
		superseded := a.latest != mine
		a.mu.Unlock()
		if superseded {
			return nil
		}
		err := func() error {
			current, err := a.API.Read(ctx, a.Namespace, a.Pod)
			if err != nil {
				return err
			}
			if AlreadySays(current, a.PodUID, ack, a.since) {
				return nil
			}
			body := LeaseFor(a.Pod, a.PodUID, a.Namespace, a.Pool, ack, loadedAt, current)
			if current == nil {
				return a.API.Create(ctx, a.Namespace, body)
			}
			return a.API.Replace(ctx, a.Namespace, body)
		}()
		if err == nil {
			return nil
		}
		if !transient(StatusOf(err)) || attempt >= attempts {
			return err
		}
		wait := backoff << (attempt - 1)
		if wait > 5*time.Second {
			wait = 5 * time.Second
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
