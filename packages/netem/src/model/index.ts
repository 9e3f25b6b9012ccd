/**
 * @webpp/netem/model: the pure, I/O-free part of the link emulator (scenario format,
 * seeded random source, distributions, schedules, per-request plans). The simulator uses
 * exactly this code, so that it draws from the same distributions as the emulator.
 */
export * from './random.js';
export * from './distributions.js';
export * from './errors.js';
export * from './scenario.js';
export * from './schedule.js';
export * from './request-plan.js';
export * from './generator.js';
