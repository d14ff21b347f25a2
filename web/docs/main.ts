/**
 * The API reference at /docs/: Swagger UI rendering the gateway's own `/v1/openapi.json`, with
 * "Try it out" sending requests to this same gateway (the document names no server, so the
 * document's origin is used). Nothing is fetched from anywhere else: no validator badge, no
 * fonts, the library bundled.
 */
import SwaggerUI from 'swagger-ui-dist/swagger-ui-es-bundle.js';
import 'swagger-ui-dist/swagger-ui.css';
import './docs.css';

SwaggerUI({
  url: '/v1/openapi.json',
  dom_id: '#swagger',
  // The default validator badge loads an image from a public service: off.
  validatorUrl: null,
  // Deep links put an <a> inside each operation's toggle button (nested controls, an axe failure).
  deepLinking: false,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  displayRequestDuration: true,
  tryItOutEnabled: true,
  onComplete: () => document.body.setAttribute('data-docs-ready', 'true'),
});
