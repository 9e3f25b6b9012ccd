/** Which code a bench run measured: `<branch>@<short commit>` of the checkout (a `+` when it had uncommitted changes), or "unknown". */
import { execFileSync } from 'node:child_process';

export function engineLabel(root: string): string {
  try {
    const git = (...args: string[]): string => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
    const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
    return `${git('rev-parse', '--abbrev-ref', 'HEAD')}@${git('rev-parse', '--short', 'HEAD')}${dirty ? '+' : ''}`;
  } catch {
    return 'unknown';
  }
}
