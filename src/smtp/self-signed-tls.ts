import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { isLoopbackAddress, makeSelfSigned, selfSignedFiles, stillServes } from '../lib/self-signed.js';
import type { ListenerOptions } from './listener.js';

/**
 * The options with the certificate the listener presents: smtp.tls; or,
 * without it, for a listener that faces the network (binds other than
 * loopback) or takes implicit TLS, the self-signed one of data_dir/tls,
 * made at the first start and logged at warn at each (docs/security.md).
 * Without a certificate no STARTTLS, and so no AUTH for any client but
 * loopback.
 */
export async function withCertificate(o: ListenerOptions): Promise<ListenerOptions> {
  if ((o.tls.key && o.tls.cert) || (isLoopbackAddress(o.host) && !o.secure)) return o;
  const own = await ensureSelfSigned(o.dataDir, o.hostname);
  o.logger.warn(
    { listener: o.name, host: o.host, cert: own.cert, created: own.created },
    `smtp.tls is not set: the ${o.name} listener presents a self-signed certificate for ${o.hostname}${own.created ? ', made now' : ''}; clients must be told to trust it, or set smtp.tls (docs/security.md)`,
  );
  return { ...o, tls: { key: own.key, cert: own.cert } };
}

/**
 * The self-signed pair for `hostname` in data_dir/tls (the folder 0700, the
 * files 0600): made when missing, when it names another host or has less than
 * 30 days left, else reused. `created` says which.
 */
export async function ensureSelfSigned(
  dataDir: string,
  hostname: string,
  now = Date.now(),
): Promise<{ key: string; cert: string; created: boolean }> {
  const files = selfSignedFiles(dataDir);
  const kept = await Promise.all([readFile(files.cert), readFile(files.key)]).then(
    ([cert]) => stillServes(cert, hostname, now),
    () => false,
  );
  if (kept) return { ...files, created: false };
  await mkdir(dirname(files.key), { recursive: true, mode: 0o700 });
  await chmod(dirname(files.key), 0o700);
  const made = makeSelfSigned(hostname, now);
  // written aside and renamed: another process starting meanwhile reads the old pair or the new one, whole
  const aside = `.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(files.key + aside, made.key, { mode: 0o600 });
  await writeFile(files.cert + aside, made.cert, { mode: 0o600 });
  await rename(files.key + aside, files.key);
  await rename(files.cert + aside, files.cert);
  return { ...files, created: true };
}
