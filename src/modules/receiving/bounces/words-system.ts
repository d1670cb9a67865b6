import { rule } from './phrases.js';

/**
 * Phrases weighed only after the status (classify-bounce.ts): they explain a failure whose status
 * names none or only a likely one (5.0.0, 5.7.1, 5.1.1 "unless the words say otherwise"), but are too
 * general to outweigh a status that names its failure (a "local policy" line under 5.2.2 is still a
 * full mailbox). Sources as in words-recipient.ts.
 */

export const MAILER_ERROR = rule('mailer_error', [
  'mailer error',
  'unknown mailer',
  'procmail',
  'maildrop',
  'command (?:failed|died|output)',
  '(?:exit|exited with) (?:status|code)',
  'pipe to \\|',
  'x-unix',
  'local delivery failed',
  'delivery to (?:a )?(?:pipe|program|command) failed',
]);

export const EXPIRED = rule('expired', [
  '(?:delivery|retry|queue) (?:time ?)?(?:expired|exceeded|timeout)',
  '(?:message|envelope|delivery) (?:has )?expired',
  'expired after',
  'connection expired', // Gmail: the session outlived its time
  'giving up|gave up',
  'too long (?:in|on) (?:the )?queue|(?:in|on) the queue too long|been in the queue',
  'queue (?:life ?time|time) (?:exceeded|expired)',
  'could not be delivered (?:for|within) [^.;]{0,20}(?:days?|hours?)',
  'not (?:been )?delivered (?:for|within) (?:more than )?\\d',
  'was not reachable within',
  'retry time not reached',
  'failing for a long time',
  'delivery attempts will continue',
  'has been delayed|message delayed',
  'timed? ?out',
  'did not respond|not responding',
  'not collected after',
  'after (?:multiple|\\d+) (?:retries|attempts)',
  'failed \\d+ attempts',
  'did not accept our requests to connect', // Gmail: the remote server kept refusing connections
]);

/** The reporter holds the message without a verdict: moderation, a review queue. */
export const ON_HOLD = rule('on_hold', [
  '\\bon hold\\b',
  'held for (?:review|moderation|approval)',
  '(?:awaiting|pending) (?:moderation|moderator|approval|review)',
]);

export const POLICY_VIOLATION = rule('policy_violation', [
  'polic(?:y|ies)',
  'prohibited',
  'forbidden',
  'not allowed by',
  'organi[sz]ation(?:al)? (?:settings|rules)',
  'mass mailer',
  'illegal attachment',
  'attachment[^.;]{0,30}(?:not allowed|forbidden|blocked|rejected)',
  'closed mailing list',
  'protocol violation',
  'header error',
]);

export const SYSTEM_FULL = rule('system_full', [
  'mail system full',
  'insufficient (?:system|disk) (?:storage|resources|space)(?! for)',
  '(?:system|server|disk) (?:storage )?(?:is )?full',
]);

export const NETWORK_ERROR = rule('network_error', [
  'no route to host',
  '(?:host|network) (?:is )?(?:unreachable|not reachable)',
  'connection (?:refused|reset|lost|closed|dropped)',
  '(?:could not|couldn.t|unable to|cannot) connect',
  'name server',
  'dns (?:query|lookup|error|failure|records|server)',
  'host name lookup',
  'lookup fail',
  'host not found, try again',
  'loop',
  'too many hops|hop count',
  'unrouteable mail domain',
]);

export const SYSTEM_ERROR = rule('system_error', [
  'local (?:error|problem|configuration)',
  'internal (?:server )?error',
  'system (?:error|failure|problem|config)',
  'server (?:error|failure|busy|configuration|is misconfigured)',
  'configuration error|misconfigured',
  'temporar(?:il)?y (?:unavailable|failure|error|problem|not available|rejected|deferred)',
  'resources? (?:temporarily )?unavailable',
  'service (?:currently|temporarily) (?:unavailable|not available)',
  'i/o error|write error|interrupted system call',
  'upstream error',
  'transaction failed',
  'could not load drd', // MX Logic
  'unable to process',
  'try (?:again )?later',
]);

export const SYNTAX_ERROR = rule('syntax_error', [
  'syntax error',
  'bad sequence of commands',
  '(?:unrecognized|unknown|unimplemented) command',
  'command (?:not )?(?:recognized|implemented)',
  'malformed address',
  'invalid (?:command|argument)',
  'line too long',
  'parameter not implemented',
]);
