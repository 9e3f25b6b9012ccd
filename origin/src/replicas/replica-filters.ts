/**
 * The user's filters around a replica operation (paper Section 5.2): pre-filters run first,
 * in order, and any can veto (a thrown error vetoes too: WEBPP_ERR_VETOED, with the status it
 * asks for); post-filters run after a successful operation, and their errors are logged,
 * never thrown (the operation has happened).
 */
import type { FastifyBaseLogger } from 'fastify';
import { WEBPP_ERR_VETOED } from '../errors.js';
import type { PostFilter, PreFilter, ReplicaOperation, ReplicaOutcome } from '../options.js';

export async function runPreFilters(filters: readonly PreFilter[], operation: ReplicaOperation): Promise<void> {
  for (const filter of filters) {
    let verdict;
    try {
      verdict = await filter(operation);
    } catch (error) {
      throw new WEBPP_ERR_VETOED((error as Error).message);
    }
    if (verdict !== undefined && verdict !== null && typeof verdict === 'object' && typeof verdict.veto === 'string') {
      const veto = new WEBPP_ERR_VETOED(verdict.veto);
      if (verdict.statusCode !== undefined && verdict.statusCode >= 400 && verdict.statusCode < 600) veto.statusCode = verdict.statusCode;
      throw veto;
    }
  }
}

export async function runPostFilters(filters: readonly PostFilter[], operation: ReplicaOperation, outcome: ReplicaOutcome, log: FastifyBaseLogger): Promise<void> {
  for (const filter of filters) {
    try {
      await filter(operation, outcome);
    } catch (error) {
      log.error({ err: error, operation: operation.operation, logicalUrl: operation.logicalUrl }, 'webpp post-filter failed');
    }
  }
}
