package swarmworker

import (
	"context"
	"path/filepath"
	"syscall"
	"time"
)

// dirEvents signals each change in path's directory (inotify); without it, a tick every 250 ms.
func dirEvents(ctx context.Context, path string, onError func(error)) <-chan struct{} {
	out := make(chan struct{}, 1)
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err == nil {
		const mask = syscall.IN_CREATE | syscall.IN_DELETE | syscall.IN_MOVED_TO | syscall.IN_MOVED_FROM | syscall.IN_CLOSE_WRITE | syscall.IN_MODIFY | syscall.IN_ATTRIB
		if _, err = syscall.InotifyAddWatch(fd, filepath.Dir(path), mask); err != nil {
			syscall.Close(fd)
		}
	}
	if err != nil {
		onError(err)
		return ticks(ctx, out)
	}
	go func() {
		defer syscall.Close(fd)
		buf := make([]byte, 4096)
		for ctx.Err() == nil {
			n, err := syscall.Read(fd, buf)
			if n > 0 {
				select {
				case out <- struct{}{}:
				default:
				}
				continue
			}
			if err != nil && err != syscall.EAGAIN && err != syscall.EINTR {
				onError(err)
				return
			}
			// Non-blocking: a short sleep between empty reads keeps ctx's end prompt.
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return out
}

func ticks(ctx context.Context, out chan struct{}) <-chan struct{} {
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
