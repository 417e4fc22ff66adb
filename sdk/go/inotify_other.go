//go:build !linux

package swarmworker

import (
	"context"
	"time"
)

// dirEvents without inotify: a tick every 250 ms.
func dirEvents(ctx context.Context, _ string, _ func(error)) <-chan struct{} {
	out := make(chan struct{}, 1)
	go func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
	}()
	return out
}
