/** The API description's version string (spec, Versioning) and the release it was cut on. */
export const API_VERSION = '1.0.0-preview.5'
export const RELEASE_DATE = '2026-11-25'
