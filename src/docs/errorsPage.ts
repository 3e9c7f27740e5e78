import { STATUS_TYPES } from '../http/errors.js'

/** When each problem type occurs and what a client should do; `type` links land on these anchors. */
const GUIDANCE: Record<string, { when: string; retry: string }> = {
  'invalid-request': {
    when: 'A parameter, a value or the body is invalid, a parameter the path does not take is present, or a parameter is repeated. Every fault is listed in issues.',
    retry: 'No; fix the request.',
  },
  unauthorized: {
    when: 'No API key was sent, or the key sent is not recognised (mistyped, unknown or revoked). The detail says which.',
    retry: 'No.',
  },
  'not-found': { when: 'Nothing is served at the path, or the record does not exist.', retry: 'No.' },
  'method-not-allowed': {
    when: 'The path does not take this method.',
    retry: 'No; use a method listed in Allow.',
  },
  'not-acceptable': {
    when: 'The Accept header admits no JSON media type, or (FHIR base) an unserved FHIR release or _format value was asked.',
    retry: 'No; accept JSON.',
  },
  'request-timeout': {
    when: 'The request (its headers, or its body) did not arrive in full in time.',
    retry: 'Yes, once the connection is faster; send the body at once.',
  },
  'headers-too-large': {
    when: 'The request line and headers together exceed 16 KiB (a very long URL, or many cookies).',
    retry: 'No; send less (a POST with a Parameters body carries long FHIR operation inputs).',
  },
  'unsupported-media-type': {
    when: 'A body was posted without a JSON content type.',
    retry: 'No; declare JSON.',
  },
  'rate-limited': {
    when: "The organization's plan limit for this minute, or (Developer plan) for this month, is reached.",
    retry: 'Yes, after Retry-After. Monthly refusals must not be retried automatically.',
  },
  'server-error': { when: 'The server met an unexpected condition.', retry: 'Once, after a short wait.' },
  unavailable: {
    when: 'The service or one of its sources cannot answer now (the store is unreadable, or the key could not be checked).',
    retry: 'Yes, after Retry-After when sent.',
  },
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string)

export function errorsPageHtml(): string {
  const sections = Object.entries(STATUS_TYPES)
    .filter(([, type]) => type.slug !== null)
    .map(([status, type]) => {
      const guide = GUIDANCE[type.slug as string]
      return `<section id="${type.slug}">
  <h2><a href="#${type.slug}">${escapeHtml(type.slug as string)}</a> — ${status} ${escapeHtml(type.title)}</h2>
  <p>${escapeHtml(guide?.when ?? '')}</p>
  <p><strong>Retry:</strong> ${escapeHtml(guide?.retry ?? '')} <strong>OperationOutcome code on the FHIR base:</strong> <code>${type.fhirCode}</code></p>
</section>`
    })
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>svc API errors</title>
<style>body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;line-height:1.5}code{background:#f3f3f3;padding:0 .2em}</style>
</head><body>
<h1>Errors</h1>
<p>Outside the FHIR base every error is an RFC 9457 problem (<code>application/problem+json</code>) whose <code>type</code> links to one section below. Under <code>/v1/fhir/r4</code> errors are OperationOutcome resources. Every response carries <code>X-Request-Id</code>.</p>
${sections.join('\n')}
</body></html>
`
}
