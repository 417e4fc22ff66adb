// Condition messages stay bounded whatever the Swarm's size: metav1.Condition
// caps a message at 32768 bytes, and a Swarm may have thousands of workers.
import { LIMITS } from '../api/schema.js';

/** "a-0, a-1, … and 1,198 more": a condition message must stay far below 32 KiB whatever the replica count. */
export function summariseWorkers(names: readonly string[], named: number = LIMITS.workersNamedInMessages): string {
  if (names.length <= named) return names.join(', ');
  return `${names.slice(0, named).join(', ')}, … and ${(names.length - named).toLocaleString('en-US')} more`;
}

/** Cut to LIMITS.conditionMessageMaxLength characters (metav1.Condition caps messages at 32768 bytes). */
export function boundMessage(message: string): string {
  const max = LIMITS.conditionMessageMaxLength;
  return message.length <= max ? message : `${message.slice(0, max - 1)}…`;
}
