/**
 * An error whose message is for the person at the terminal: a file that cannot be read, an organization
 * that does not exist, a setting with a bad value. Every command prints it as one line, without a stack
 * trace, and exits with code 2. Domains extend it for their own.
 */
export class UserError extends Error {
  override name = 'UserError'
}
