// A small Fastify app with dynamic routes, made a Web++ server by registering one plugin.
import Fastify from 'fastify';
import fastifyStatic from '@fastify/static';
import { webppOrigin } from '@webpp/origin';
import { fileURLToPath } from 'node:url';
import { findRecipe, recipes } from './recipes.js';

const publicDir = fileURLToPath(new URL('./public/', import.meta.url));

/** Escapes text for HTML. */
function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]);
}

function layout(title, body) {
  // No <script src="/webpp.js"> here: the plugin inserts it into every HTML response.
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>${escapeHtml(title)} · Pantry</title>
    <link rel="stylesheet" href="/static/style.css">
  </head>
  <body>
    <header><a href="/"><img src="/static/img/logo.svg" width="28" height="28" alt=""> Pantry</a></header>
    <main>${body}</main>
  </body>
</html>`;
}

/**
 * Builds the app. `webpp` holds the plugin's options: at least `publicUrl`; in a cluster
 * also `peers`, `clusterSecret`, `logicalOrigin` and the replication `directory`.
 * @param {{ webpp?: import('@webpp/origin').WebppOriginOptions, logger?: boolean }} [options]
 */
export async function buildApp({ webpp, logger = false } = {}) {
  const app = Fastify({ logger });

  // 1. The webpp plugin: bindings header on every response (dynamic ones included), the
  //    worker scripts, CORS for replicated resources, the directory and its propagation.
  await app.register(webppOrigin, webpp);

  // 2. The app's own routes, unchanged.
  app.get('/', async (_request, reply) => {
    const items = recipes
      .map((recipe) => `<li><a href="/recipes/${recipe.slug}"><img src="/static/img/${recipe.image}" width="64" height="64" alt=""> ${escapeHtml(recipe.title)}</a> <span>${recipe.minutes} min</span></li>`)
      .join('\n');
    return reply.type('text/html; charset=utf-8').send(layout('Recipes', `<h1>Recipes</h1><ul class="recipes">${items}</ul>`));
  });

  app.get('/recipes/:slug', async (request, reply) => {
    const recipe = findRecipe(request.params.slug);
    if (!recipe) return reply.code(404).type('text/html; charset=utf-8').send(layout('Not found', '<h1>No such recipe</h1><p><a href="/">All recipes</a></p>'));
    const steps = recipe.steps.map((step) => `<li>${escapeHtml(step)}</li>`).join('');
    return reply.type('text/html; charset=utf-8').send(
      layout(
        recipe.title,
        `<article><img class="hero" src="/static/img/${recipe.image}" width="160" height="160" alt="">
         <h1>${escapeHtml(recipe.title)}</h1><p>${escapeHtml(recipe.summary)} (${recipe.minutes} minutes)</p><ol>${steps}</ol>
         <p><a href="/">All recipes</a></p></article>`,
      ),
    );
  });

  app.get('/api/recipes', async () => recipes.map(({ slug, title, minutes }) => ({ slug, title, minutes, url: `/recipes/${slug}` })));

  // 3. Static files.
  await app.register(fastifyStatic, { root: publicDir, prefix: '/static/' });
  return app;
}
