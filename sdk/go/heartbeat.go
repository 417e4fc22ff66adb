// The heartbeat (docs/worker-protocol.md W25): while its jobs are healthy the
// worker renews a Lease of its own, `<pod>.heartbeat`, every third of the
// lease. A renewal that succeeded proves, until the renew deadline counted
// (on the monotonic clock) from when it was sent, that the worker could reach
// the API server and was not paused; past it the worker is stale and fences
// itself (failover.go). A timer armed at the deadline notices staleness with
// no request in flight, and the worker judges again before each apply, so a
// process resumed after SIGSTOP learns it first (W28).
package swarmworker

import (
	"context"
	"net/url"
	"sync"
	"time"
)

// heartbeatAPI writes the heartbeat Lease and returns it as stored (its new resourceVersion guards the next renewal).
type heartbeatAPI interface {
	Read(ctx context.Context, namespace, name string) (Lease, error)
	CreateReturning(ctx context.Context, namespace string, lease Lease) (Lease, error)
	ReplaceReturning(ctx context.Context, namespace string, lease Lease) (Lease, error)
}

func (l kubeLeases) CreateReturning(ctx context.Context, namespace string, lease Lease) (Lease, error) {
	var out Lease
	err := l.k.Do(ctx, "POST", leasesPath(namespace), lease, &out)
	return out, err
}

func (l kubeLeases) ReplaceReturning(ctx context.Context, namespace string, lease Lease) (Lease, error) {
	var out Lease
	name, _ := field(lease, "metadata")["name"].(string)
	err := l.k.Do(ctx, "PUT", leasesPath(namespace)+"/"+url.PathEscape(name), lease, &out)
	return out, err
}

// microTime is Kubernetes MicroTime: RFC 3339 in UTC with exactly six fractional digits.
func microTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z07:00") }

// HeartbeatLeaseFor is the heartbeat Lease after a renewal at `at`; fields it does not own are kept.
func HeartbeatLeaseFor(pod, podUID, namespace, pool string, leaseSeconds int, at time.Time, current Lease) Lease {
	spec := map[string]any{"holderIdentity": podUID, "leaseDurationSeconds": leaseSeconds, "renewTime": microTime(at)}
	if field(current, "spec")["holderIdentity"] != podUID {
		spec["acquireTime"] = microTime(at)
	}
	return leaseWith(current, HeartbeatLeaseName(pod), namespace, map[string]any{HeartbeatLabel: pool}, map[string]any{ProtocolAnnotation: FailoverProtocol}, spec)
}

type heartbeat struct {
	api                          heartbeatAPI
	pod, podUID, namespace, pool string
	load                         func() *FailoverSettings // failover.yml, read again at every beat
	healthy                      func() bool              // no renewal while it fails
	onStale, onFresh             func()                   // once per change; they must not block
	onError                      func(error)
	// inherit is given the pod's acknowledgement and heartbeat Leases (nil: absent) as an earlier process left
	// them, read once before the first renewal (which overwrites the heartbeat's renewTime); nil: not read.
	inherit func(ack, heartbeat Lease, now time.Time)

	mu        sync.Mutex
	settings  *FailoverSettings
	current   Lease
	renewed   time.Time // when the last renewal that succeeded was sent; zero: none yet
	stale     bool
	deadline  *time.Timer
	kick      chan struct{}
	inherited bool
}

func newHeartbeat(h *heartbeat) *heartbeat {
	h.stale, h.kick = true, make(chan struct{}, 1)
	h.settings = h.load()
	return h
}

// Settings are the settings as last read (nil: no failover).
func (h *heartbeat) Settings() *FailoverSettings {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.settings
}

func (h *heartbeat) freshLocked() bool {
	return h.settings != nil && !h.renewed.IsZero() && time.Since(h.renewed) < failoverTimings(h.settings.LeaseSeconds).renewDeadline
}

// Fresh: renewed within the renew deadline by this process's clock.
func (h *heartbeat) Fresh() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.freshLocked()
}

// EverRenewed: a renewal has succeeded since the worker started.
func (h *heartbeat) EverRenewed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.renewed.IsZero()
}

// Kick asks for a beat now (settings read again, a renewal).
func (h *heartbeat) Kick() {
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// judge tells stale or fresh once per change, and arms a timer at the deadline.
func (h *heartbeat) judge() {
	h.mu.Lock()
	if h.settings == nil {
		h.mu.Unlock()
		return
	}
	fresh := h.freshLocked()
	var call func()
	if !fresh && !h.stale {
		h.stale, call = true, h.onStale
	} else if fresh && h.stale {
		h.stale, call = false, h.onFresh
	}
	if fresh {
		if h.deadline != nil {
			h.deadline.Stop()
		}
		h.deadline = time.AfterFunc(time.Until(h.renewed.Add(failoverTimings(h.settings.LeaseSeconds).renewDeadline)), h.judge)
	}
	h.mu.Unlock()
	if call != nil {
		call()
	}
}

// readInherited reads the pod's Leases for inherit, once (false: not read yet, the renewal waits).
func (h *heartbeat) readInherited(ctx context.Context) bool {
	if h.inherit == nil || h.inherited {
		return true
	}
	ack, err := h.api.Read(ctx, h.namespace, h.pod)
	var own Lease
	if err == nil {
		own, err = h.api.Read(ctx, h.namespace, HeartbeatLeaseName(h.pod))
	}
	if err != nil {
		if h.onError != nil {
			h.onError(err)
		}
		return false
	}
	h.inherit(ack, own, time.Now())
	h.mu.Lock()
	h.inherited, h.current = true, own
	h.mu.Unlock()
	return true
}

func (h *heartbeat) renew(ctx context.Context, s FailoverSettings) bool {
	rctx, cancel := context.WithTimeout(ctx, failoverTimings(s.LeaseSeconds).renewInterval)
	defer cancel()
	if !h.readInherited(rctx) {
		return false
	}
	sentAt := time.Now() // wall time for renewTime, monotonic reading for the deadline
	h.mu.Lock()
	current := h.current
	h.mu.Unlock()
	body := HeartbeatLeaseFor(h.pod, h.podUID, h.namespace, h.pool, s.LeaseSeconds, sentAt, current)
	var stored Lease
	var err error
	if current == nil {
		stored, err = h.api.CreateReturning(rctx, h.namespace, body)
	} else {
		stored, err = h.api.ReplaceReturning(rctx, h.namespace, body)
	}
	if err != nil {
		if code := StatusOf(err); code == 409 || code == 404 {
			// A conflict, or a Lease already there (or gone): read it again for the next try.
			again, _ := h.api.Read(rctx, h.namespace, HeartbeatLeaseName(h.pod))
			h.mu.Lock()
			h.current = again
			h.mu.Unlock()
		}
		if h.onError != nil {
			h.onError(err)
		}
		return false
	}
	h.mu.Lock()
	h.current = stored
	if sentAt.After(h.renewed) {
		h.renewed = sentAt
	}
	h.mu.Unlock()
	return true
}

// run beats until ctx ends: with settings, renews while healthy every L/3 (a failure is retried soon); without, looks for them every 5 s.
func (h *heartbeat) run(ctx context.Context) {
	defer func() {
		h.mu.Lock()
		if h.deadline != nil {
			h.deadline.Stop()
		}
		h.mu.Unlock()
	}()
	for {
		h.judge() // first: a resumed process learns it is stale before anything else
		s := h.load()
		h.mu.Lock()
		h.settings = s
		h.mu.Unlock()
		wait := 5 * time.Second
		if s != nil {
			ok := h.healthy() && h.renew(ctx, *s)
			h.judge()
			t := failoverTimings(s.LeaseSeconds)
			wait = t.retry
			if ok {
				wait = t.renewInterval
			}
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		case <-h.kick:
			timer.Stop()
		}
	}
}
