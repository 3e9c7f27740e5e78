// Starts Swagger UI (served from this server's /assets, from the swagger-ui-dist package) on /openapi.json.
// validatorUrl null: Swagger UI would otherwise send the document to validator.swagger.io for a badge.
window.addEventListener('DOMContentLoaded', () => {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#api',
    validatorUrl: null,
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
  })
})
