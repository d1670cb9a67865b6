import { extname } from 'node:path';

/**
 * File types refused as attachments, after Gmail's list of blocked file
 * types (support.google.com/mail/answer/6590): executables, scripts,
 * installers and shortcuts that run code when opened.
 */
const BLOCKED_EXTENSIONS = new Set([
  'ade',
  'adp',
  'apk',
  'appx',
  'appxbundle',
  'bat',
  'cab',
  'chm',
  'cmd',
  'com',
  'cpl',
  'diagcab',
  'diagcfg',
  'diagpack',
  'dll',
  'dmg',
  'ex',
  'ex_',
  'exe',
  'hta',
  'img',
  'ins',
  'iso',
  'isp',
  'jar',
  'jnlp',
  'js',
  'jse',
  'lib',
  'lnk',
  'mde',
  'mjs',
  'msc',
  'msi',
  'msix',
  'msixbundle',
  'msp',
  'mst',
  'nsh',
  'pif',
  'ps1',
  'psm1',
  'ps1xml',
  'psc1',
  'reg',
  'scr',
  'sct',
  'shb',
  'sh',
  'sys',
  'vb',
  'vbe',
  'vbs',
  'vhd',
  'vxd',
  'wsc',
  'wsf',
  'wsh',
  'xll',
  'app',
  'command',
  'deb',
  'rpm',
  // scripts that an interpreter on the recipient's machine runs when opened, beyond Gmail's list
  'py',
  'pyw',
  'pyc',
  'pl',
  'rb',
  'php',
  'bash',
  'ksh',
  'csh',
  'zsh',
  'scpt',
  'applescript',
  'gadget',
  'inf',
  'ps2',
  'ps2xml',
  'psc2',
  'psd1',
  'msh',
  'msh1',
  'msh2',
  'mshxml',
  'application',
  'appref-ms',
  'workflow',
  'action',
  'run',
]);

/**
 * Why a file name is refused, or null. The extension that counts is the last
 * one, as it is what the recipient's system opens the file by
 * (invoice.pdf.exe is refused); trailing dots and spaces do not hide it.
 * Inner dots are not extensions: invoice-example.com.pdf is a PDF.
 */
export function checkAttachmentName(filename: string): string | null {
  if (/[\r\n\0/\\]/.test(filename)) return 'must be a plain file name without path separators or line breaks';
  const cleaned = filename
    .trim()
    .replace(/[.\s]+$/, '')
    .toLowerCase();
  const dot = cleaned.lastIndexOf('.');
  const extension = dot > 0 ? cleaned.slice(dot + 1).trim() : '';
  return BLOCKED_EXTENSIONS.has(extension)
    ? `has the extension .${extension}: executables and scripts are refused`
    : null;
}

/**
 * Base64 as interface §4.1 patterns it (RFC 4648 §4 alphabet, padding
 * optional): anything that does not decode and re-encode to itself, up to
 * the padding, is refused rather than silently truncated.
 */
export function decodeBase64Strict(content: string): Buffer | null {
  if (content.length === 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(content)) return null;
  const bare = content.replace(/=+$/, '');
  if (bare.length % 4 === 1 || (content.length !== bare.length && content.length % 4 !== 0)) return null;
  const buf = Buffer.from(bare, 'base64');
  return buf.toString('base64').replace(/=+$/, '') === bare ? buf : null;
}

/** What the first bytes say the file is, when it is something that runs; null otherwise. */
export function sniffExecutable(bytes: Buffer): string | null {
  if (bytes.length >= 2 && bytes[0] === 0x4d && bytes[1] === 0x5a) return 'Windows executable (MZ)';
  if (bytes.length >= 4 && bytes.readUInt32BE(0) === 0x7f454c46) return 'ELF executable';
  if (bytes.length >= 4) {
    const magic = bytes.readUInt32BE(0);
    if ([0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe].includes(magic)) return 'Mach-O executable';
    // 0xcafebabe is a Mach-O universal binary or a Java class file: both run code.
    if (magic === 0xcafebabe) return 'Mach-O universal binary or Java class';
  }
  if (bytes.length >= 2 && bytes[0] === 0x23 && bytes[1] === 0x21) return 'script (#!)';
  // A UTF-8 BOM before the shebang does not make it less of a script.
  if (
    bytes.length >= 5 &&
    bytes[0] === 0xef &&
    bytes[1] === 0xbb &&
    bytes[2] === 0xbf &&
    bytes[3] === 0x23 &&
    bytes[4] === 0x21
  )
    return 'script (#!)';
  return null;
}

const TYPES: Record<string, string> = {
  txt: 'text/plain',
  csv: 'text/csv',
  html: 'text/html',
  htm: 'text/html',
  ics: 'text/calendar',
  xml: 'application/xml',
  json: 'application/json',
  pdf: 'application/pdf',
  zip: 'application/zip',
  gz: 'application/gzip',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text',
  mp3: 'audio/mpeg',
  mp4: 'video/mp4',
  eml: 'message/rfc822',
};

export function guessContentType(filename: string): string {
  return TYPES[extname(filename).slice(1).toLowerCase()] ?? 'application/octet-stream';
}
