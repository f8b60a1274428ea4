// Who may open a terminal into a container (issue 22): administrators only, that is a role with the
// `manage` action of the permission table (admins and owners). The table's middleware already refuses the
// terminal routes to others; this check stays in the session module so no entry point can skip it.
import { ROLE_ACTIONS, type Role } from '../auth/permissions.js';
import { forbidden } from '../errors.js';

export interface TerminalUser {
  id: number;
  username: string;
  role: Role;
}

export const mayOpenTerminal = (user: TerminalUser): boolean => ROLE_ACTIONS[user.role]?.has('manage') ?? false;

/** Throws 403 `terminal_forbidden` unless the user may open a terminal. */
export function requireTerminalAccess(user: TerminalUser): void {
  if (!mayOpenTerminal(user)) throw forbidden('terminal_forbidden', 'only administrators may open a terminal into a container');
}
