// config.yml, read strictly (docs/worker-protocol.md §3.1, W1, W2, W4, W5):
// the YAML is decoded to nodes, not to Go values, so a scalar's tag decides
// whether it is a string (an unquoted 123 is an integer: invalid).
package swarmworker

import (
	"fmt"
	"sort"

	"gopkg.in/yaml.v3"
)

// Share is one worker's entry: what it runs and the version it was assigned at.
type Share struct {
	Jobs      []string
	Version   int
	Releasing []string
	Awaiting  []string
	Released  []string
}

// Config is a parsed config.yml.
type Config struct {
	Version   int
	Workloads map[string]Share
}

// ShareOf is the worker's share; a worker without an entry owns nothing (Version -1).
func (c Config) ShareOf(pod string) Share {
	s, ok := c.Workloads[pod]
	if !ok {
		return Share{Version: -1}
	}
	jobs := append([]string(nil), s.Jobs...)
	sort.Strings(jobs)
	s.Jobs = jobs
	return s
}

// ParseConfig reads config.yml, refusing anything but the protocol's shape.
func ParseConfig(text []byte) (Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return Config{}, fmt.Errorf("invalid YAML: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return Config{}, fmt.Errorf("(document): expected a mapping with \"workloads\" and \"version\"")
	}
	root := doc.Content[0]
	var cfg Config
	var haveVersion, haveWorkloads bool
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, value := root.Content[i], root.Content[i+1]
		if seen[key.Value] {
			return Config{}, fmt.Errorf("%d:%d: %s: duplicate key", key.Line, key.Column, key.Value)
		}
		seen[key.Value] = true
		switch key.Value {
		case "version":
			v, err := nonNegative(value, "version")
			if err != nil {
				return Config{}, err
			}
			cfg.Version, haveVersion = v, true
		case "workloads":
			w, err := parseWorkloads(value)
			if err != nil {
				return Config{}, err
			}
			cfg.Workloads, haveWorkloads = w, true
		default:
			return Config{}, fmt.Errorf("%d:%d: %s: unknown field (expected \"workloads\" and \"version\")", key.Line, key.Column, key.Value)
		}
	}
	if !haveWorkloads {
		return Config{}, fmt.Errorf("workloads: missing")
	}
	if !haveVersion {
		return Config{}, fmt.Errorf("version: missing")
	}
	return cfg, nil
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

func parseWorkloads(n *yaml.Node) (map[string]Share, error) {
	out := map[string]Share{}
	if isNull(n) {
		return out, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%d:%d: workloads: expected a mapping of worker name to {jobs, version}", n.Line, n.Column)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i], n.Content[i+1]
		if key.Kind != yaml.ScalarNode || key.ShortTag() != "!!str" || key.Value == "" {
			return nil, fmt.Errorf("%d:%d: workloads: worker names must be non-empty strings", key.Line, key.Column)
		}
		field := "workloads." + key.Value
		if _, dup := out[key.Value]; dup {
			return nil, fmt.Errorf("%d:%d: %s: duplicate worker", key.Line, key.Column, field)
		}
		if value.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%d:%d: %s: expected a mapping with \"jobs\" and \"version\"", value.Line, value.Column, field)
		}
		var share Share
		var haveJobs, haveVersion bool
		seen := map[string]bool{}
		for j := 0; j+1 < len(value.Content); j += 2 {
			k, v := value.Content[j], value.Content[j+1]
			if seen[k.Value] {
				return nil, fmt.Errorf("%d:%d: %s.%s: duplicate key", k.Line, k.Column, field, k.Value)
			}
			seen[k.Value] = true
			var err error
			switch k.Value {
			case "version":
				share.Version, err = nonNegative(v, field+".version")
				haveVersion = true
			case "jobs":
				share.Jobs, err = jobList(v, field+".jobs")
				haveJobs = true
			case "releasing":
				share.Releasing, err = jobList(v, field+".releasing")
			case "awaiting":
				share.Awaiting, err = jobList(v, field+".awaiting")
			case "released":
				share.Released, err = jobList(v, field+".released")
			default:
				err = fmt.Errorf("%d:%d: %s.%s: unknown field", k.Line, k.Column, field, k.Value)
			}
			if err != nil {
				return nil, err
			}
		}
		if !haveJobs {
			return nil, fmt.Errorf("%s.jobs: missing", field)
		}
		if !haveVersion {
			return nil, fmt.Errorf("%s.version: missing", field)
		}
		running := map[string]bool{}
		for _, j := range share.Jobs {
			running[j] = true
		}
		for _, j := range share.Releasing {
			if !running[j] {
				return nil, fmt.Errorf("%s.releasing: %q is not in jobs", field, j)
			}
		}
		for _, j := range share.Awaiting {
			if running[j] {
				return nil, fmt.Errorf("%s.awaiting: %q is already in jobs", field, j)
			}
		}
		for _, j := range share.Released {
			if running[j] {
				return nil, fmt.Errorf("%s.released: %q is still in jobs", field, j)
			}
		}
		out[key.Value] = share
	}
	return out, nil
}

func jobList(n *yaml.Node, field string) ([]string, error) {
	if isNull(n) {
		return []string{}, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%d:%d: %s: expected a list of job names", n.Line, n.Column, field)
	}
	seen := map[string]bool{}
	jobs := make([]string, 0, len(n.Content))
	for i, item := range n.Content {
		if item.Kind != yaml.ScalarNode || item.ShortTag() != "!!str" || item.Value == "" {
			return nil, fmt.Errorf("%d:%d: %s[%d]: expected a non-empty string", item.Line, item.Column, field, i)
		}
		if seen[item.Value] {
			return nil, fmt.Errorf("%d:%d: %s[%d]: duplicate job %q", item.Line, item.Column, field, i, item.Value)
		}
		seen[item.Value] = true
		jobs = append(jobs, item.Value)
	}
	return jobs, nil
}

func nonNegative(n *yaml.Node, field string) (int, error) {
	var v int
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil || v < 0 {
		return 0, fmt.Errorf("%d:%d: %s: expected a non-negative integer", n.Line, n.Column, field)
	}
	return v, nil
}
