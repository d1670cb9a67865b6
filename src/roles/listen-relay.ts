import type { ListenFrame, ListenOutcome, ListenSink } from '../modules/notifying/webhooks/listen-stream.js';

/** The background thread asks the API thread to write a frame to its listen stream… */
export interface ListenAsk {
  type: 'listen';
  id: number;
  endpointId: string;
  frame: ListenFrame;
}

/** …which answers what became of it. */
export interface ListenAnswer {
  type: 'listened';
  id: number;
  outcome: ListenOutcome;
}

/**
 * In `serve` the dispatcher runs on the background thread and the `posthorn
 * listen` streams are responses of the API thread (modules/notifying/webhooks/
 * listen-hub.ts): a listen delivery crosses over as a message, and the
 * answer (its ListenOutcome) comes back as one. The dispatcher keeps its claim
 * and records the attempt, as for any endpoint.
 */
export class ListenRelay {
  private next = 0;
  private readonly waiting = new Map<number, (outcome: ListenOutcome) => void>();

  constructor(private readonly send: (m: ListenAsk) => void) {}

  readonly sink: ListenSink = (endpointId, frame) =>
    new Promise<ListenOutcome>((resolve) => {
      const id = ++this.next;
      this.waiting.set(id, resolve);
      this.send({ type: 'listen', id, endpointId, frame });
    });

  answered(m: ListenAnswer): void {
    this.waiting.get(m.id)?.(m.outcome);
    this.waiting.delete(m.id);
  }

  /** The other thread is gone: nothing is written any more. */
  close(): void {
    for (const resolve of this.waiting.values()) resolve('not_connected');
    this.waiting.clear();
  }
}

/** The API thread's way in: ListenHub.deliver. */
export type ListenDeliver = (endpointId: string, frame: ListenFrame) => ListenOutcome;

/** The API thread's side: the frame written to its hub, the answer sent back. */
export function answerListen(m: ListenAsk, deliver: ListenDeliver): ListenAnswer {
  return { type: 'listened', id: m.id, outcome: deliver(m.endpointId, m.frame) };
}
