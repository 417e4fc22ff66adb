// Following a file mounted from a ConfigMap (docs/worker-protocol.md W6): the
// kubelet swaps a `..data` symlink, never rewriting the file in place, so the
// path is read again, never an open inode. Directory events (inotify, on Linux)
// wake a read 100 ms after the last one; a read every 30 s covers a lost event.
package swarmworker

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"time"
)

// fileText is the file's content; nil while it does not exist.
func fileText(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// watchFile calls deliver with the file's text (nil: absent) once, then each time it differs, until ctx ends.
func watchFile(ctx context.Context, path string, deliver func([]byte), onError func(error)) {
	events := dirEvents(ctx, path, onError)
	var last []byte
	delivered := false
	read := func() {
		text, err := fileText(path)
		if err != nil {
			onError(err)
			return
		}
		if delivered && (text == nil) == (last == nil) && bytes.Equal(text, last) {
			return
		}
		last, delivered = text, true
		deliver(text)
	}
	read()
	poll := time.NewTicker(30 * time.Second)
	defer poll.Stop()
	var debounce <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-events:
			debounce = time.After(100 * time.Millisecond)
		case <-debounce:
			debounce = nil
			read()
		case <-poll.C:
			read()
		}
	}
}
