// Kubernetes object names, checked the way the apiserver checks them, so a name
// it would refuse never reaches an API path (where `..` is a path segment).
// The rules are apimachinery's IsDNS1123Label / IsDNS1123Subdomain; which one a
// kind uses is its own validation's choice (k8s.io/kubernetes v1.36
// pkg/apis/core/validation, pkg/apis/apps/validation, and apiextensions-apiserver
// for custom resources).

export const DNS_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
export const DNS_SUBDOMAIN_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
export const DNS_LABEL_MAX_LENGTH = 63;
export const DNS_SUBDOMAIN_MAX_LENGTH = 253;

/** What each rule means, in words a person can act on. */
export const DNS_LABEL_MEANING = 'must be a DNS label (lowercase letters, digits and "-", starting and ending alphanumeric)';
export const DNS_SUBDOMAIN_MEANING = 'must be a DNS subdomain (lowercase letters, digits, "-" and ".")';

const DNS_LABEL = new RegExp(DNS_LABEL_PATTERN);
const DNS_SUBDOMAIN = new RegExp(DNS_SUBDOMAIN_PATTERN);

// Length first: it bounds the regular expressions' backtracking too.
const isDns1123Label = (text: string): boolean => text.length <= DNS_LABEL_MAX_LENGTH && DNS_LABEL.test(text);
const isDns1123Subdomain = (text: string): boolean => text.length <= DNS_SUBDOMAIN_MAX_LENGTH && DNS_SUBDOMAIN.test(text);

/**
 * The rule each kind Swarm names follows. StatefulSet names are labels (not
 * subdomains, like most kinds) because they become pods' hostnames.
 */
const NAME_RULES = {
  Namespace: 'label',
  StatefulSet: 'label',
  Deployment: 'label',
  Pod: 'subdomain',
  ConfigMap: 'subdomain',
  Swarm: 'subdomain',
  Lease: 'subdomain',
} as const satisfies Record<string, 'label' | 'subdomain'>;

export type NamedKind = keyof typeof NAME_RULES;

/** Why `name` cannot name a `kind`, or undefined when it can. */
export function nameProblem(kind: NamedKind, name: string): string | undefined {
  if (NAME_RULES[kind] === 'label') {
    return isDns1123Label(name) ? undefined : `not a DNS-1123 label (at most ${DNS_LABEL_MAX_LENGTH} characters: lowercase letters, digits and "-", starting and ending alphanumeric)`;
  }
  return isDns1123Subdomain(name)
    ? undefined
    : `not a DNS-1123 subdomain (at most ${DNS_SUBDOMAIN_MAX_LENGTH} characters: lowercase letters, digits, "-" and ".", each dot-separated part starting and ending alphanumeric)`;
}

/** A name as it appears in a message: quoted, escaped, and cut short when long. */
export function quoteName(name: string): string {
  const shown = name.length > 70 ? `${name.slice(0, 60)}…` : name;
  return `${JSON.stringify(shown)}${shown === name ? '' : ` (${name.length} characters)`}`;
}

/** `field: "value": problem` when the name is not valid for its kind, else undefined. */
export function checkName(field: string, kind: NamedKind, name: string): string | undefined {
  const problem = nameProblem(kind, name);
  return problem === undefined ? undefined : `${field}: ${quoteName(name)}: ${problem}`;
}
