package swarmworker

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
)

// JobsDigest is the acknowledgement's digest (docs/worker-protocol.md §4):
// sha256 over each name followed by "\n", names sorted by byte, hex, "sha256:".
func JobsDigest(jobs []string) string {
	sorted := append([]string(nil), jobs...)
	sort.Strings(sorted)
	h := sha256.New()
	for _, j := range sorted {
		h.Write([]byte(j + "\n"))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
