#!/usr/bin/env node
// Generates the demo gallery's assets, deterministically:
//   - site/photos/*.jpg: 32 procedural landscape "photographs" (seeded noise, no downloads);
//   - site/fonts/*.woff2: Inter and Fraunces (SIL OFL 1.1) copied from @fontsource.
// The outputs are committed, so the site is a plain folder any server can serve; run this
// again only to change them: `npm run generate-assets -w @webpp/example-demo`.
import { mkdirSync, writeFileSync, copyFileSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import jpeg from 'jpeg-js';

const here = dirname(fileURLToPath(import.meta.url));
const siteDir = join(here, '..', 'site');
const require = createRequire(import.meta.url);

const WIDTH_PX = 720;
const HEIGHT_PX = 480;
const JPEG_QUALITY = 80;

// ---------------------------------------------------------------- random and noise

function mulberry32(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 2-D value noise on a 256-cell lattice, smoothstep-interpolated; returns [0, 1). */
function makeNoise(random) {
  const lattice = new Float32Array(256 * 256);
  for (let i = 0; i < lattice.length; i += 1) lattice[i] = random();
  const at = (x, y) => lattice[((y & 255) << 8) | (x & 255)];
  const smooth = (t) => t * t * (3 - 2 * t);
  const noise = (x, y) => {
    const x0 = Math.floor(x);
    const y0 = Math.floor(y);
    const tx = smooth(x - x0);
    const ty = smooth(y - y0);
    const top = at(x0, y0) + (at(x0 + 1, y0) - at(x0, y0)) * tx;
    const bottom = at(x0, y0 + 1) + (at(x0 + 1, y0 + 1) - at(x0, y0 + 1)) * tx;
    return top + (bottom - top) * ty;
  };
  /** Fractal Brownian motion: octaves of noise, each at double frequency and half weight. */
  const fbm = (x, y, octaves = 5) => {
    let sum = 0;
    let weight = 0.5;
    let norm = 0;
    for (let octave = 0; octave < octaves; octave += 1) {
      sum += noise(x, y) * weight;
      norm += weight;
      x *= 2.03;
      y *= 2.03;
      weight *= 0.5;
    }
    return sum / norm;
  };
  return { noise, fbm };
}

// ---------------------------------------------------------------- colour helpers

const hex = (value) => [parseInt(value.slice(1, 3), 16), parseInt(value.slice(3, 5), 16), parseInt(value.slice(5, 7), 16)];
const mix = (a, b, t) => [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t];
const clamp01 = (t) => (t < 0 ? 0 : t > 1 ? 1 : t);
const scale = (color, k) => [color[0] * k, color[1] * k, color[2] * k];

/** A vertical gradient through colour stops [[position 0..1, '#rrggbb'], ...]. */
function gradient(stops) {
  const parsed = stops.map(([position, color]) => [position, hex(color)]);
  return (t) => {
    if (t <= parsed[0][0]) return parsed[0][1];
    for (let i = 1; i < parsed.length; i += 1) {
      const [position, color] = parsed[i];
      if (t <= position) {
        const [previousPosition, previousColor] = parsed[i - 1];
        return mix(previousColor, color, (t - previousPosition) / (position - previousPosition));
      }
    }
    return parsed[parsed.length - 1][1];
  };
}

// ---------------------------------------------------------------- the canvas

class Canvas {
  constructor(width, height) {
    this.width = width;
    this.height = height;
    this.pixels = new Float32Array(width * height * 3);
  }
  set(x, y, color) {
    const i = (y * this.width + x) * 3;
    this.pixels[i] = color[0];
    this.pixels[i + 1] = color[1];
    this.pixels[i + 2] = color[2];
  }
  get(x, y) {
    const i = (y * this.width + x) * 3;
    return [this.pixels[i], this.pixels[i + 1], this.pixels[i + 2]];
  }
  blend(x, y, color, alpha) {
    if (x < 0 || y < 0 || x >= this.width || y >= this.height || alpha <= 0) return;
    this.set(x, y, mix(this.get(x, y), color, clamp01(alpha)));
  }
  /** Film look: soft vignette plus fine grain, so flat areas do not band. */
  finish(random, grain = 6) {
    const cx = this.width / 2;
    const cy = this.height / 2;
    const maxDistance = Math.hypot(cx, cy);
    for (let y = 0; y < this.height; y += 1) {
      for (let x = 0; x < this.width; x += 1) {
        const distance = Math.hypot(x - cx, y - cy) / maxDistance;
        const vignette = 1 - 0.32 * distance * distance;
        const noise = (random() - 0.5) * grain;
        const i = (y * this.width + x) * 3;
        for (let c = 0; c < 3; c += 1) this.pixels[i + c] = this.pixels[i + c] * vignette + noise;
      }
    }
  }
  toJpeg(quality) {
    const data = Buffer.alloc(this.width * this.height * 4);
    for (let p = 0, q = 0; p < this.pixels.length; p += 3, q += 4) {
      data[q] = Math.max(0, Math.min(255, Math.round(this.pixels[p])));
      data[q + 1] = Math.max(0, Math.min(255, Math.round(this.pixels[p + 1])));
      data[q + 2] = Math.max(0, Math.min(255, Math.round(this.pixels[p + 2])));
      data[q + 3] = 255;
    }
    return jpeg.encode({ data, width: this.width, height: this.height }, quality).data;
  }
}

// ---------------------------------------------------------------- scene pieces

function paintSky(canvas, sky, { horizon = 1, clouds = 0, cloudColor = '#ffffff', noise, seedX = 0 }) {
  const cloud = hex(cloudColor);
  for (let y = 0; y < canvas.height; y += 1) {
    const t = y / (canvas.height * horizon);
    for (let x = 0; x < canvas.width; x += 1) {
      let color = sky(clamp01(t));
      if (clouds > 0 && t < 1) {
        const density = noise.fbm(seedX + x / 140, y / 55, 5);
        const cover = clamp01((density - (1 - clouds)) * 3) * (1 - t * 0.6);
        color = mix(color, mix(cloud, sky(clamp01(t + 0.15)), t * 0.5), cover);
      }
      canvas.set(x, y, color);
    }
  }
}

function paintSun(canvas, { x: sunX, y: sunY, radiusPx, color, glowPx }) {
  const sun = hex(color);
  for (let y = 0; y < canvas.height; y += 1) {
    for (let x = 0; x < canvas.width; x += 1) {
      const distance = Math.hypot(x - sunX, y - sunY);
      if (distance < radiusPx) canvas.blend(x, y, sun, 0.96);
      else canvas.blend(x, y, sun, 0.55 * Math.exp(-(distance - radiusPx) / glowPx));
    }
  }
}

/** A mountain ridge: a 1-D fractal height per column, filled below, hazed toward `haze`. */
function paintRidge(canvas, noise, { baseY, amplitudePx, frequency, seedY, color, haze, hazeAmount, roughness = 5, shade = 0.25 }) {
  const body = mix(hex(color), hex(haze), hazeAmount);
  for (let x = 0; x < canvas.width; x += 1) {
    const height = noise.fbm(x * frequency, seedY, roughness);
    const top = Math.round(baseY - height * amplitudePx);
    for (let y = Math.max(0, top); y < canvas.height; y += 1) {
      const depth = (y - top) / canvas.height;
      // Light from the left on a rocky 2-D relief: the relief's horizontal slope shades it.
      const u = x / 46 + seedY;
      const v = y / 30;
      const slope = noise.fbm(u - 0.08, v, 4) - noise.fbm(u + 0.08, v, 4);
      const lit = clamp01(0.5 + slope * 5);
      const color = scale(body, 1 - shade + shade * lit * 2 * (1 - depth));
      canvas.set(x, y, color);
    }
  }
}

function paintWater(canvas, noise, { fromY, sky, reflect = true, tint = '#1b3a4b', tintAmount = 0.45, seed = 0 }) {
  const water = hex(tint);
  const source = new Float32Array(canvas.pixels);
  for (let y = fromY; y < canvas.height; y += 1) {
    const depth = (y - fromY) / (canvas.height - fromY);
    for (let x = 0; x < canvas.width; x += 1) {
      const ripple = (noise.fbm(x / 70 + seed, y / 5, 3) - 0.5) * (6 + depth * 26);
      const mirrorY = Math.round(fromY - (y - fromY) - 1 + ripple);
      let color;
      if (reflect && mirrorY >= 0 && mirrorY < fromY) {
        const i = (mirrorY * canvas.width + Math.min(canvas.width - 1, Math.max(0, Math.round(x + ripple * 0.4)))) * 3;
        color = [source[i], source[i + 1], source[i + 2]];
      } else {
        color = sky(1);
      }
      const glint = noise.noise(x / 3 + seed, y / 1.5) > 0.93 - depth * 0.05 ? 0.25 : 0;
      color = mix(color, water, tintAmount + depth * 0.25);
      canvas.set(x, y, mix(color, [255, 255, 255], glint * (1 - depth)));
    }
  }
}

function paintStars(canvas, random, { count, maxY }) {
  for (let i = 0; i < count; i += 1) {
    const x = Math.floor(random() * canvas.width);
    const y = Math.floor(random() * maxY);
    const brightness = 0.35 + random() * 0.65;
    canvas.blend(x, y, [255, 250, 235], brightness);
    if (brightness > 0.92) {
      for (const [dx, dy] of [[1, 0], [-1, 0], [0, 1], [0, -1]]) canvas.blend(x + dx, y + dy, [255, 250, 235], 0.35);
    }
  }
}

function paintAurora(canvas, noise, { colors, baseY, heightPx }) {
  const palette = colors.map(hex);
  for (let x = 0; x < canvas.width; x += 1) {
    const wave = noise.fbm(x / 260, 3.3, 4);
    const center = baseY - wave * heightPx;
    const intensity = noise.fbm(x / 40, 9.1, 3);
    for (let y = 0; y < canvas.height; y += 1) {
      const above = center - y;
      if (above < -20 || above > heightPx) continue;
      const fall = above < 0 ? Math.exp(above / 8) : Math.exp(-above / (heightPx * 0.35));
      const color = mix(palette[0], palette[1], clamp01(above / heightPx));
      canvas.blend(x, y, color, fall * intensity * 0.9);
    }
  }
}

function paintTrees(canvas, random, { count, baseY, minHeightPx, maxHeightPx, color, jitterPx = 14 }) {
  const body = hex(color);
  for (let i = 0; i < count; i += 1) {
    const cx = random() * canvas.width;
    const height = minHeightPx + random() * (maxHeightPx - minHeightPx);
    const base = baseY + (random() - 0.5) * jitterPx;
    const halfWidth = height * (0.16 + random() * 0.08);
    for (let y = Math.max(0, Math.floor(base - height)); y < Math.min(canvas.height, base + 4); y += 1) {
      const t = (y - (base - height)) / height;
      const tier = 0.55 + 0.45 * ((t * 5) % 1);
      const half = halfWidth * t * tier;
      for (let x = Math.floor(cx - half); x <= Math.ceil(cx + half); x += 1) {
        if (x < 0 || x >= canvas.width) continue;
        const edge = clamp01(half - Math.abs(x - cx) + 0.5);
        canvas.blend(x, y, scale(body, 0.85 + 0.3 * (x < cx ? 1 : 0)), edge);
      }
    }
  }
}

function paintDunes(canvas, noise, { fromY, light, dark, seed }) {
  const bright = hex(light);
  const shadow = hex(dark);
  for (let y = fromY; y < canvas.height; y += 1) {
    const depth = (y - fromY) / (canvas.height - fromY);
    for (let x = 0; x < canvas.width; x += 1) {
      const u = x / (120 + depth * 260) + noise.fbm(x / 300 + seed, y / 90, 3) * 2.2;
      const v = (y - fromY) / (10 + depth * 60);
      const crest = Math.sin(u * 2.4 + v * 1.7);
      const ripple = Math.sin(x / 3.2 + y / 2.1 + noise.noise(x / 20, y / 20) * 6) * 0.06;
      canvas.set(x, y, mix(shadow, bright, clamp01(0.55 + crest * 0.45 + ripple)));
    }
  }
}

function paintSkyline(canvas, random, { baseY, color, windowColor, count }) {
  const body = hex(color);
  const lit = hex(windowColor);
  let x = -10;
  while (x < canvas.width && count-- > 0) {
    const width = 26 + Math.floor(random() * 46);
    const height = 60 + Math.floor(random() * 190);
    for (let y = baseY - height; y < canvas.height; y += 1) {
      for (let dx = 0; dx < width; dx += 1) {
        if (x + dx < 0 || x + dx >= canvas.width) continue;
        canvas.set(x + dx, y, body);
      }
    }
    for (let wy = baseY - height + 8; wy < baseY - 6; wy += 9) {
      for (let wx = 5; wx < width - 6; wx += 8) {
        if (random() < 0.42) {
          for (let py = 0; py < 4; py += 1) for (let px = 0; px < 3; px += 1) canvas.blend(x + wx + px, wy + py, lit, 0.6 + random() * 0.4);
        }
      }
    }
    x += width + Math.floor(random() * 6);
  }
}

function paintFields(canvas, noise, { fromY, colors, seed }) {
  const palette = colors.map(hex);
  for (let y = fromY; y < canvas.height; y += 1) {
    const depth = (y - fromY) / (canvas.height - fromY);
    for (let x = 0; x < canvas.width; x += 1) {
      const hill = noise.fbm(x / 380 + seed, (y - fromY) / (30 + depth * 200), 4);
      const band = Math.floor(hill * palette.length * 1.6) % palette.length;
      const rows = 0.9 + 0.1 * Math.sin((x - canvas.width / 2) / (2 + depth * 6) * (0.3 + depth));
      const texture = 0.92 + noise.noise(x / 4, y / 4) * 0.16;
      canvas.set(x, y, scale(mix(palette[band], [200, 220, 255], (1 - depth) * 0.25), rows * texture));
    }
  }
}

// ---------------------------------------------------------------- scenes

const scenes = {
  alpine({ canvas, noise, random, palette }) {
    const sky = gradient(palette.sky);
    paintSky(canvas, sky, { horizon: 0.72, clouds: palette.clouds ?? 0.35, cloudColor: palette.cloud, noise, seedX: random() * 50 });
    if (palette.sun) paintSun(canvas, { x: canvas.width * (0.2 + random() * 0.6), y: canvas.height * 0.36, radiusPx: 20, color: palette.sun, glowPx: 70 });
    const layers = palette.ridges;
    layers.forEach((color, index) => {
      const t = index / (layers.length - 1 || 1);
      paintRidge(canvas, noise, {
        baseY: canvas.height * (0.5 + t * 0.3),
        amplitudePx: canvas.height * (0.34 - t * 0.12),
        frequency: 1 / (180 - t * 90),
        seedY: index * 13.7 + random() * 40,
        color,
        haze: palette.sky[Math.min(palette.sky.length - 1, 2)][1],
        hazeAmount: 0.62 * (1 - t),
      });
    });
  },
  lake({ canvas, noise, random, palette }) {
    const sky = gradient(palette.sky);
    paintSky(canvas, sky, { horizon: 0.6, clouds: palette.clouds ?? 0.4, cloudColor: palette.cloud, noise, seedX: random() * 50 });
    if (palette.sun) paintSun(canvas, { x: canvas.width * (0.25 + random() * 0.5), y: canvas.height * 0.3, radiusPx: 18, color: palette.sun, glowPx: 90 });
    palette.ridges.forEach((color, index, all) => {
      const t = index / (all.length - 1 || 1);
      paintRidge(canvas, noise, {
        baseY: canvas.height * (0.6 + t * 0.02),
        amplitudePx: canvas.height * (0.3 - t * 0.17),
        frequency: 1 / (200 - t * 110),
        seedY: index * 9.1 + random() * 40,
        color,
        haze: palette.sky[1][1],
        hazeAmount: 0.55 * (1 - t),
      });
    });
    if (palette.trees) paintTrees(canvas, random, { count: 70, baseY: canvas.height * 0.61, minHeightPx: 14, maxHeightPx: 44, color: palette.trees, jitterPx: 4 });
    paintWater(canvas, noise, { fromY: Math.round(canvas.height * 0.62), sky, tint: palette.water, seed: random() * 10 });
  },
  coast({ canvas, noise, random, palette }) {
    const sky = gradient(palette.sky);
    const horizonY = Math.round(canvas.height * (0.5 + random() * 0.08));
    paintSky(canvas, sky, { horizon: horizonY / canvas.height, clouds: palette.clouds ?? 0.45, cloudColor: palette.cloud, noise, seedX: random() * 50 });
    const sunX = canvas.width * (0.3 + random() * 0.4);
    if (palette.sun) paintSun(canvas, { x: sunX, y: horizonY - 40, radiusPx: 24, color: palette.sun, glowPx: 110 });
    if (palette.headland) {
      paintRidge(canvas, noise, { baseY: horizonY, amplitudePx: 90, frequency: 1 / 120, seedY: random() * 40, color: palette.headland, haze: palette.sky[1][1], hazeAmount: 0.35, shade: 0.15 });
    }
    paintWater(canvas, noise, { fromY: horizonY, sky, tint: palette.water, tintAmount: 0.55, seed: random() * 10 });
  },
  dunes({ canvas, noise, random, palette }) {
    const sky = gradient(palette.sky);
    const horizonY = Math.round(canvas.height * 0.45);
    paintSky(canvas, sky, { horizon: horizonY / canvas.height, clouds: palette.clouds ?? 0.15, cloudColor: palette.cloud, noise, seedX: random() * 50 });
    if (palette.sun) paintSun(canvas, { x: canvas.width * (0.2 + random() * 0.6), y: horizonY * 0.55, radiusPx: 16, color: palette.sun, glowPx: 60 });
    paintRidge(canvas, noise, { baseY: horizonY + 6, amplitudePx: 40, frequency: 1 / 260, seedY: random() * 40, color: palette.dark, haze: palette.sky[2][1], hazeAmount: 0.5, roughness: 3 });
    paintDunes(canvas, noise, { fromY: horizonY, light: palette.light, dark: palette.dark, seed: random() * 20 });
  },
  aurora({ canvas, noise, random, palette }) {
    const sky = gradient(palette.sky);
    paintSky(canvas, sky, { horizon: 0.8, noise });
    paintStars(canvas, random, { count: 900, maxY: canvas.height * 0.75 });
    paintAurora(canvas, noise, { colors: palette.aurora, baseY: canvas.height * (0.5 + random() * 0.12), heightPx: canvas.height * 0.42 });
    paintRidge(canvas, noise, { baseY: canvas.height * 0.8, amplitudePx: canvas.height * 0.2, frequency: 1 / 150, seedY: random() * 40, color: palette.ground, haze: '#000000', hazeAmount: 0, shade: 0.1 });
    if (palette.trees) paintTrees(canvas, random, { count: 90, baseY: canvas.height * 0.93, minHeightPx: 30, maxHeightPx: 90, color: palette.trees });
  },
  forest({ canvas, noise, random, palette }) {
    const sky = gradient(palette.sky);
    paintSky(canvas, sky, { horizon: 0.7, clouds: palette.clouds ?? 0.5, cloudColor: palette.cloud, noise, seedX: random() * 50 });
    if (palette.sun) paintSun(canvas, { x: canvas.width * (0.25 + random() * 0.5), y: canvas.height * 0.28, radiusPx: 16, color: palette.sun, glowPx: 80 });
    palette.ridges.forEach((color, index, all) => {
      const t = index / (all.length - 1 || 1);
      const baseY = canvas.height * (0.52 + t * 0.28);
      paintRidge(canvas, noise, { baseY, amplitudePx: canvas.height * 0.16, frequency: 1 / 230, seedY: index * 5.3 + random() * 30, color, haze: palette.sky[1][1], hazeAmount: 0.6 * (1 - t), roughness: 4 });
      paintTrees(canvas, random, { count: 50 + index * 25, baseY: baseY - canvas.height * 0.03, minHeightPx: 18 + t * 40, maxHeightPx: 40 + t * 90, color: mix(hex(color), hex(palette.sky[1][1]), 0.45 * (1 - t)).map((c) => Math.round(c)).reduce((s, c) => s + c.toString(16).padStart(2, '0'), '#') });
    });
  },
  city({ canvas, noise, random, palette }) {
    const sky = gradient(palette.sky);
    paintSky(canvas, sky, { horizon: 0.85, clouds: palette.clouds ?? 0.2, cloudColor: palette.cloud, noise, seedX: random() * 50 });
    if (palette.stars) paintStars(canvas, random, { count: 220, maxY: canvas.height * 0.45 });
    if (palette.moon) paintSun(canvas, { x: canvas.width * (0.15 + random() * 0.7), y: canvas.height * 0.18, radiusPx: 14, color: palette.moon, glowPx: 40 });
    paintSkyline(canvas, random, { baseY: Math.round(canvas.height * 0.72), color: palette.far, windowColor: palette.windows, count: 60 });
    paintSkyline(canvas, random, { baseY: Math.round(canvas.height * 0.8), color: palette.near, windowColor: palette.windows, count: 60 });
    if (palette.water) paintWater(canvas, noise, { fromY: Math.round(canvas.height * 0.8), sky, tint: palette.water, tintAmount: 0.35, seed: random() * 10 });
  },
  fields({ canvas, noise, random, palette }) {
    const sky = gradient(palette.sky);
    const horizonY = Math.round(canvas.height * 0.42);
    paintSky(canvas, sky, { horizon: horizonY / canvas.height, clouds: palette.clouds ?? 0.5, cloudColor: palette.cloud, noise, seedX: random() * 50 });
    if (palette.sun) paintSun(canvas, { x: canvas.width * (0.2 + random() * 0.6), y: horizonY * 0.5, radiusPx: 15, color: palette.sun, glowPx: 70 });
    paintRidge(canvas, noise, { baseY: horizonY + 4, amplitudePx: 30, frequency: 1 / 200, seedY: random() * 40, color: palette.colors[0], haze: palette.sky[2][1], hazeAmount: 0.55, roughness: 3 });
    paintFields(canvas, noise, { fromY: horizonY, colors: palette.colors, seed: random() * 20 });
  },
};

// ---------------------------------------------------------------- the collection

const dawn = [[0, '#2b3a67'], [0.45, '#b05f7a'], [0.8, '#f2a36b'], [1, '#fcd9a0']];
const noon = [[0, '#2f6bb3'], [0.5, '#6fa5d8'], [0.85, '#bcd7ee'], [1, '#e6eef5']];
const dusk = [[0, '#1d1836'], [0.4, '#5a2f5e'], [0.75, '#d9664a'], [1, '#f6b25d']];
const overcast = [[0, '#6d7580'], [0.5, '#9aa2ab'], [0.9, '#c4c8cc'], [1, '#d6d8da']];
const night = [[0, '#05070f'], [0.6, '#0c1530'], [0.9, '#17264a'], [1, '#1f3157']];
const teal = [[0, '#0f3b4f'], [0.5, '#3f8c9c'], [0.85, '#a8d5d2'], [1, '#e4efe6']];

/** Every photo: file name, title, place, tag (the gallery's filter), scene and palette. */
export const photos = [
  { file: 'alpenglow-ridge', title: 'Alpenglow Ridge', place: 'Vel Massif', tag: 'mountains', scene: 'alpine', palette: { sky: dawn, ridges: ['#5d4b66', '#46384f', '#2d2433', '#1a1520'], sun: '#ffe0a8', cloud: '#ffd2c0' } },
  { file: 'blue-hour-col', title: 'Blue Hour at the Col', place: 'Sarn Pass', tag: 'mountains', scene: 'alpine', palette: { sky: [[0, '#101c3d'], [0.6, '#395487'], [0.9, '#8ba4c9'], [1, '#c6d3e6']], ridges: ['#3b4a6b', '#2a3654', '#1a2238'], clouds: 0.2, cloud: '#9fb3d6' } },
  { file: 'noon-glacier', title: 'Glacier at Noon', place: 'Idris Icefield', tag: 'mountains', scene: 'alpine', palette: { sky: noon, ridges: ['#a9b7c6', '#7d8c9c', '#55606d', '#353d46'], cloud: '#ffffff' } },
  { file: 'storm-front', title: 'Storm Front', place: 'Korrin Heights', tag: 'mountains', scene: 'alpine', palette: { sky: overcast, ridges: ['#6b727a', '#4a5057', '#2f3338'], clouds: 0.7, cloud: '#e8e9ea' } },
  { file: 'ember-peaks', title: 'Ember Peaks', place: 'Ashfold', tag: 'mountains', scene: 'alpine', palette: { sky: dusk, ridges: ['#6e3c4f', '#4c2939', '#2c1822'], sun: '#ffc67a', cloud: '#ffb08a' } },
  { file: 'first-light-tarn', title: 'First Light, Tarn Eyre', place: 'Eyre Valley', tag: 'lakes', scene: 'lake', palette: { sky: dawn, ridges: ['#6a5570', '#3d3346'], sun: '#ffe6b0', trees: '#1f2a25', water: '#2a3550', cloud: '#ffd8c8' } },
  { file: 'still-water', title: 'Still Water', place: 'Lake Morrow', tag: 'lakes', scene: 'lake', palette: { sky: noon, ridges: ['#8797a8', '#4d6a55'], trees: '#1e3b2a', water: '#1d3c4f', cloud: '#ffffff' } },
  { file: 'violet-reflections', title: 'Violet Reflections', place: 'Lake Siel', tag: 'lakes', scene: 'lake', palette: { sky: dusk, ridges: ['#59355c', '#2d1d35'], sun: '#ffcf88', trees: '#150f1a', water: '#2a1b33', cloud: '#f7a38c' } },
  { file: 'grey-loch', title: 'Grey Loch', place: 'Loch Ardan', tag: 'lakes', scene: 'lake', palette: { sky: overcast, ridges: ['#7a8084', '#4c5255'], trees: '#2a3030', water: '#3c4448', clouds: 0.75, cloud: '#eef0f1' } },
  { file: 'teal-basin', title: 'Teal Basin', place: 'Cirque Oran', tag: 'lakes', scene: 'lake', palette: { sky: teal, ridges: ['#5d8a86', '#2f5a55'], trees: '#183a33', water: '#0f4a4f', cloud: '#f3fbf7' } },
  { file: 'golden-strand', title: 'Golden Strand', place: 'Cape Liss', tag: 'coast', scene: 'coast', palette: { sky: dusk, sun: '#ffd38a', water: '#3a2540', headland: '#2b1a2a', cloud: '#ffb48f' } },
  { file: 'open-sea', title: 'Open Sea', place: 'Outer Banks', tag: 'coast', scene: 'coast', palette: { sky: noon, water: '#0d3b5c', cloud: '#ffffff' } },
  { file: 'morning-harbour', title: 'Morning Harbour', place: 'Port Aven', tag: 'coast', scene: 'coast', palette: { sky: dawn, sun: '#fff0c2', water: '#2a3a5c', headland: '#3c3550', cloud: '#ffd9c7' } },
  { file: 'squall-line', title: 'Squall Line', place: 'Northreach', tag: 'coast', scene: 'coast', palette: { sky: overcast, water: '#2f3b44', clouds: 0.8, cloud: '#f0f1f2', headland: '#3c4246' } },
  { file: 'lagoon', title: 'Lagoon', place: 'Isle Mara', tag: 'coast', scene: 'coast', palette: { sky: teal, water: '#0b6b70', cloud: '#ffffff', sun: '#fffbe0' } },
  { file: 'red-erg', title: 'Red Erg', place: 'Qasr Dunes', tag: 'desert', scene: 'dunes', palette: { sky: [[0, '#3c78b5'], [0.6, '#8fb5d6'], [0.95, '#e6d5bf'], [1, '#f0dcc0']], light: '#e39a5c', dark: '#8a4426', cloud: '#ffffff' } },
  { file: 'pale-dunes', title: 'Pale Dunes', place: 'White Sands', tag: 'desert', scene: 'dunes', palette: { sky: noon, light: '#f2e6cf', dark: '#b8a27e', cloud: '#ffffff' } },
  { file: 'desert-dusk', title: 'Desert Dusk', place: 'Amar Flats', tag: 'desert', scene: 'dunes', palette: { sky: dusk, light: '#e08b5a', dark: '#5b2a2e', sun: '#ffd07a', cloud: '#f4a27e' } },
  { file: 'salt-wind', title: 'Salt Wind', place: 'Kavir', tag: 'desert', scene: 'dunes', palette: { sky: overcast, light: '#d9c9a8', dark: '#7d6b52', clouds: 0.5, cloud: '#f5f3ef' } },
  { file: 'green-veil', title: 'Green Veil', place: 'Tromsvik', tag: 'night', scene: 'aurora', palette: { sky: night, aurora: ['#35f5a0', '#3d7cff'], ground: '#05080c', trees: '#020405' } },
  { file: 'violet-curtain', title: 'Violet Curtain', place: 'Hallan Fell', tag: 'night', scene: 'aurora', palette: { sky: night, aurora: ['#9d5cff', '#ff5fa8'], ground: '#07060d' } },
  { file: 'polar-arc', title: 'Polar Arc', place: 'Skarvik', tag: 'night', scene: 'aurora', palette: { sky: [[0, '#020308'], [0.7, '#0a1a2a'], [1, '#163247']], aurora: ['#7dffb2', '#b7ffef'], ground: '#04070a', trees: '#010203' } },
  { file: 'city-lights', title: 'City Lights', place: 'Norrhaven', tag: 'night', scene: 'city', palette: { sky: night, far: '#131a2b', near: '#0a0e17', windows: '#ffd27a', stars: true, moon: '#f5f0dc', water: '#0c1426' } },
  { file: 'dusk-skyline', title: 'Dusk Skyline', place: 'Vantor', tag: 'night', scene: 'city', palette: { sky: dusk, far: '#3a2a44', near: '#1d1424', windows: '#ffe3a3', cloud: '#f4a382' } },
  { file: 'pine-ridge', title: 'Pine Ridge', place: 'Elder Woods', tag: 'forest', scene: 'forest', palette: { sky: noon, ridges: ['#4f7a5e', '#2f5a3f', '#173522'], cloud: '#ffffff' } },
  { file: 'misty-firs', title: 'Misty Firs', place: 'Grey Hollow', tag: 'forest', scene: 'forest', palette: { sky: overcast, ridges: ['#69767a', '#3f4f4c', '#1e2a27'], clouds: 0.6, cloud: '#f1f2f3' } },
  { file: 'autumn-slopes', title: 'Autumn Slopes', place: 'Coppervale', tag: 'forest', scene: 'forest', palette: { sky: dawn, ridges: ['#8a5a45', '#6b3b2c', '#3d2119'], sun: '#ffe2ad', cloud: '#ffd3c2' } },
  { file: 'teal-timber', title: 'Teal Timber', place: 'Lowen Forest', tag: 'forest', scene: 'forest', palette: { sky: teal, ridges: ['#3f7a72', '#1f5248', '#0c2e27'], cloud: '#ffffff' } },
  { file: 'summer-fields', title: 'Summer Fields', place: 'Hollin Downs', tag: 'fields', scene: 'fields', palette: { sky: noon, colors: ['#6c9a3e', '#b9b04a', '#8bb35a', '#d6c16a'], cloud: '#ffffff' } },
  { file: 'harvest-evening', title: 'Harvest Evening', place: 'Marl Plain', tag: 'fields', scene: 'fields', palette: { sky: dusk, colors: ['#8a6a3a', '#c99a4e', '#6b5a2e', '#b07a3e'], sun: '#ffd27f', cloud: '#f6a98a' } },
  { file: 'lavender-rows', title: 'Lavender Rows', place: 'Sauve', tag: 'fields', scene: 'fields', palette: { sky: dawn, colors: ['#7b6aa8', '#9a84c4', '#5f7a45', '#8672b4'], sun: '#fff0c8', cloud: '#ffd9cc' } },
  { file: 'rain-meadow', title: 'Rain Meadow', place: 'Fenwick', tag: 'fields', scene: 'fields', palette: { sky: overcast, colors: ['#5a7a48', '#7a9a5a', '#48603a', '#8aa66a'], clouds: 0.8, cloud: '#f2f3f4' } },
];

function renderPhoto(photo, index) {
  const random = mulberry32(0x5eed + index * 7919);
  const noise = makeNoise(mulberry32(0xbead + index * 104729));
  const canvas = new Canvas(WIDTH_PX, HEIGHT_PX);
  scenes[photo.scene]({ canvas, noise, random, palette: photo.palette });
  canvas.finish(random);
  return canvas.toJpeg(JPEG_QUALITY);
}

function copyFonts() {
  const fontsDir = join(siteDir, 'fonts');
  mkdirSync(fontsDir, { recursive: true });
  const fonts = [
    ['@fontsource/inter', ['inter-latin-400-normal.woff2', 'inter-latin-600-normal.woff2']],
    ['@fontsource/fraunces', ['fraunces-latin-600-normal.woff2', 'fraunces-latin-400-italic.woff2']],
  ];
  for (const [pkg, files] of fonts) {
    const pkgDir = dirname(require.resolve(`${pkg}/package.json`));
    for (const file of files) copyFileSync(join(pkgDir, 'files', file), join(fontsDir, file));
    const family = pkg.split('/')[1];
    writeFileSync(join(fontsDir, `${family}-LICENSE.txt`), readFileSync(join(pkgDir, 'LICENSE')));
  }
}

function main() {
  const only = process.argv[2];
  const photosDir = join(siteDir, 'photos');
  mkdirSync(photosDir, { recursive: true });
  let totalBytes = 0;
  photos.forEach((photo, index) => {
    if (only && photo.file !== only) return;
    const bytes = renderPhoto(photo, index);
    writeFileSync(join(photosDir, `${photo.file}.jpg`), bytes);
    totalBytes += bytes.length;
    console.log(`${photo.file}.jpg  ${(bytes.length / 1024).toFixed(1)} KiB`);
  });
  copyFonts();
  console.log(`${photos.length} photos, ${(totalBytes / 1024).toFixed(0)} KiB in total, written to ${photosDir}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
