/**
 * A generated audio file for media tests and benches: no licence to track, any length.
 */

/** A mono 8-bit 8 kHz WAV of `seconds` (a slow sweep: any bytes play), 8 000 bytes a second. */
export function wav(seconds: number): Buffer {
  const rate = 8_000;
  const samples = Buffer.alloc(seconds * rate);
  for (let i = 0; i < samples.length; i++) samples[i] = 128 + Math.round(60 * Math.sin((2 * Math.PI * (220 + i / 400) * i) / rate));
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + samples.length, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate, 28); // bytes per second
  header.writeUInt16LE(1, 32);
  header.writeUInt16LE(8, 34);
  header.write('data', 36);
  header.writeUInt32LE(samples.length, 40);
  return Buffer.concat([header, samples]);
}
