/**
 * A throwaway certificate authority for tests: made at test time (node-forge over RSA keys
 * from node:crypto), never written anywhere but a temporary folder. It issues server
 * certificates for loopback names (a.localhost, 127.0.0.1, …), so HTTPS tests run against
 * real TLS without trusting anything system-wide. The e2e suite uses it too.
 */
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

export interface TestCa {
  /** PEM of the CA certificate (to trust it: `ca:` option, NODE_EXTRA_CA_CERTS). */
  certPem: string;
  /** Issues a server certificate for these DNS names and IP addresses. */
  issue(names: string[], options?: { commonName?: string }): ServerCertificate;
}

export interface ServerCertificate {
  certPem: string;
  keyPem: string;
  /** Serial number (hex), to tell two certificates apart in tests. */
  serialHex: string;
  /** base64 SHA-256 of the SubjectPublicKeyInfo (Chromium's --ignore-certificate-errors-spki-list). */
  spkiSha256Base64: string;
}

const DAY_MS = 86_400_000;

function rsaKeys(): forge.pki.rsa.KeyPair {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  const forgePrivate = forge.pki.privateKeyFromPem(privateKey);
  return { privateKey: forgePrivate, publicKey: forge.pki.setRsaPublicKey(forgePrivate.n, forgePrivate.e) };
}

function serialHex(): string {
  // Positive (top bit clear), 16 bytes as RFC 5280 allows.
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] as number) & 0x7f;
  return bytes.toString('hex');
}

function validity(cert: forge.pki.Certificate): void {
  cert.validity.notBefore = new Date(Date.now() - DAY_MS);
  cert.validity.notAfter = new Date(Date.now() + 30 * DAY_MS);
}

export function createTestCa(name = 'webpp test CA'): TestCa {
  const caKeys = rsaKeys();
  const ca = forge.pki.createCertificate();
  ca.publicKey = caKeys.publicKey;
  ca.serialNumber = serialHex();
  validity(ca);
  const caSubject = [{ name: 'commonName', value: name }];
  ca.setSubject(caSubject);
  ca.setIssuer(caSubject);
  ca.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  ca.sign(caKeys.privateKey, forge.md.sha256.create());

  return {
    certPem: forge.pki.certificateToPem(ca),
    issue(names, options = {}) {
      const keys = rsaKeys();
      const cert = forge.pki.createCertificate();
      cert.publicKey = keys.publicKey;
      cert.serialNumber = serialHex();
      validity(cert);
      cert.setSubject([{ name: 'commonName', value: options.commonName ?? names[0] ?? 'localhost' }]);
      cert.setIssuer(caSubject);
      cert.setExtensions([
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
        { name: 'extKeyUsage', serverAuth: true },
        { name: 'subjectAltName', altNames: names.map((entry) => (/^[\d.]+$/.test(entry) ? { type: 7, ip: entry } : { type: 2, value: entry })) },
        { name: 'authorityKeyIdentifier', keyIdentifier: ca.generateSubjectKeyIdentifier().getBytes() },
      ]);
      cert.sign(caKeys.privateKey, forge.md.sha256.create());
      const spkiDer = Buffer.from(forge.asn1.toDer(forge.pki.publicKeyToAsn1(keys.publicKey)).getBytes(), 'binary');
      return {
        certPem: forge.pki.certificateToPem(cert),
        keyPem: forge.pki.privateKeyToPem(keys.privateKey),
        serialHex: cert.serialNumber,
        spkiSha256Base64: createHash('sha256').update(spkiDer).digest('base64'),
      };
    },
  };
}
