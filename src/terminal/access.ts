// Who may open a terminal into a container (issue 22): administrators only. The one place that decides it:
// today every user is an administrator (one role); the roles of the teams work replace the body of
// `mayOpenTerminal` and every entry point (the UI's WebSocket, the API's exec) follows.
import { forbidden } from '../errors.js';

export interface TerminalUser {
  id: number;
  username: string;
  /** Set once roles exist; absent today, when every user is an administrator. */
  role?: string;
}

export const mayOpenTerminal = (user: TerminalUser): boolean => user.role === undefined || user.role === 'admin';

/** Throws 403 `terminal_forbidden` unless the user may open a terminal. */
export function requireTerminalAccess(user: TerminalUser): void {
  if (!mayOpenTerminal(user)) throw forbidden('terminal_forbidden', 'only administrators may open a terminal into a container');
}
