// Drain and handover on SIGTERM (docs/worker-protocol.md §5.4, W19–W21): keep
// the jobs while the ConfigMap, read from the API, still gives this pod some
// and someone takes them over; then stop.
package swarmworker

import (
	"context"
	"net/url"
	"regexp"
	"strconv"
	"time"
)

// Departure is how a pod told to stop leaves.
type Departure int

const (
	Leaving  Departure = iota // a Deployment's pod, or a StatefulSet pod past the replicas
	Replaced                  // a StatefulSet pod within them: replaced under its own name
	Ended                     // its StatefulSet is gone: nobody takes over
)

// DepartureOf a StatefulSet pod; replicas < 0: the StatefulSet is gone.
func DepartureOf(statefulSet, pod string, start, replicas int) Departure {
	if replicas < 0 {
		return Ended
	}
	m := regexp.MustCompile(`^` + regexp.QuoteMeta(statefulSet) + `-(0|[1-9][0-9]*)$`).FindStringSubmatch(pod)
	if m == nil {
		return Leaving
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n < start || n >= start+replicas {
		return Leaving
	}
	return Replaced
}

// holdsJobs: the config gives pod jobs; no config gives none, one that cannot be parsed is taken to.
func holdsJobs(text *string, pod string) bool {
	if text == nil {
		return false
	}
	cfg, err := ParseConfig([]byte(*text))
	if err != nil {
		return true
	}
	return len(cfg.Workloads[pod].Jobs) > 0
}

type drainer struct {
	kube                           *Kube
	namespace, pod, configMap, key string
	statefulSet                    string
	interval                       time.Duration
	onError                        func(error)
}

func (d drainer) departure(ctx context.Context) (Departure, error) {
	if d.statefulSet == "" {
		return Leaving, nil
	}
	var sts struct {
		Spec struct {
			Replicas *int `json:"replicas"`
			Ordinals *struct {
				Start int `json:"start"`
			} `json:"ordinals"`
		} `json:"spec"`
	}
	err := d.kube.Do(ctx, "GET", "/apis/apps/v1/namespaces/"+url.PathEscape(d.namespace)+"/statefulsets/"+url.PathEscape(d.statefulSet), nil, &sts)
	if StatusOf(err) == 404 {
		return Ended, nil
	}
	if err != nil {
		return Leaving, err
	}
	replicas, start := 1, 0
	if sts.Spec.Replicas != nil {
		replicas = *sts.Spec.Replicas
	}
	if sts.Spec.Ordinals != nil {
		start = sts.Spec.Ordinals.Start
	}
	return DepartureOf(d.statefulSet, d.pod, start, replicas), nil
}

// waits: this round's answer, true while the pod must keep its jobs.
func (d drainer) waits(ctx context.Context) (bool, error) {
	departure, err := d.departure(ctx)
	if err != nil {
		return true, err
	}
	if departure == Ended {
		return false, nil
	}
	var cm struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Data map[string]string `json:"data"`
	}
	err = d.kube.Do(ctx, "GET", "/api/v1/namespaces/"+url.PathEscape(d.namespace)+"/configmaps/"+url.PathEscape(d.configMap), nil, &cm)
	if StatusOf(err) == 404 {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	var text *string
	if t, ok := cm.Data[d.key]; ok {
		text = &t
	}
	if !holdsJobs(text, d.pod) {
		return false, nil
	}
	return departure == Leaving || cm.Metadata.Annotations[HandoverAnnotation] == HandoverValue, nil
}

// wait returns once the pod may stop: released, nobody takes over, or its reads are refused (401, 403).
func (d drainer) wait(ctx context.Context) {
	for {
		more, err := d.waits(ctx)
		if err != nil {
			d.onError(err)
			if s := StatusOf(err); s == 401 || s == 403 {
				return
			}
		}
		if !more {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(d.interval):
		}
	}
}
