import { describe, expect, it } from 'vitest';
import { periodMsOf, shippedResyncSchedule } from '../support/resync-schedule.js';

describe('the resync period, read from knative/base/pingsource.yaml', () => {
  it('is the shipped schedule, five minutes', () => {
    expect(shippedResyncSchedule()).toBe('*/5 * * * *');
    expect(periodMsOf(shippedResyncSchedule())).toBe(300_000);
  });

  it('every minute, every N minutes; any other cron is refused', () => {
    expect(periodMsOf('* * * * *')).toBe(60_000);
    expect(periodMsOf('*/15 * * * *')).toBe(900_000);
    expect(() => periodMsOf('*/7 * * * *')).toThrow(/N dividing 60/);
    expect(() => periodMsOf('0 * * * *')).toThrow(/one period/);
  });
});
