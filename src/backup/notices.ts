// What backups tell the operator (src/notify/raise.ts): a backup that ended `failed`, raised where the
// record is marked failed (the backup reconciler, or the start-up recovery of one a dead process left
// `running`). Off-host upload failures are section 1's, as `backup_upload_failed`.
import { raise, type NoticeTarget } from '../notify/raise.js';

export function backupFailed(to: NoticeTarget, row: { id: number; filename: string; trigger: string }, reason: string): void {
  raise(to, {
    event: 'backup_failed',
    subject: `${row.trigger === 'scheduled' ? 'scheduled backup' : 'backup'} ${row.filename} failed`,
    message: `${reason.slice(0, 1000).replace(/[.\s]+$/, '')}. The previous backups are kept; nothing was deleted for this one.`,
    link: '/backups',
  });
}
