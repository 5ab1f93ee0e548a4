// Confirmations waiting for the user, oldest first. Each remembers which run asked (a turn or a
// manual call) so that the ones a cancelled run leaves behind can be dropped.

import type { PermissionRequest } from "../ipc/types";

export interface PendingConfirmation {
  id: number;
  request: PermissionRequest;
  source: string;
  /** What the request's preview holds, as its tool declares; undefined when not known. */
}

export class ConfirmationQueue {
  private items: PendingConfirmation[] = [];

  push(item: PendingConfirmation): void {
    if (!this.items.some((i) => i.id === item.id)) this.items.push(item);
  }

  current(): PendingConfirmation | undefined {
    return this.items[0];
  }

  get size(): number {
    return this.items.length;
  }

  /** Removes an answered confirmation. */
  remove(id: number): void {
    this.items = this.items.filter((i) => i.id !== id);
  }

  /** Removes every confirmation a finished run left; returns them. */
  dropSource(source: string): PendingConfirmation[] {
    const dropped = this.items.filter((i) => i.source === source);
    this.items = this.items.filter((i) => i.source !== source);
    return dropped;
  }
}
