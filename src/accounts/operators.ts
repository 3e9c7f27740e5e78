import type { Db } from '../db/open.js'
import { hashPassword, passwordFault } from './passwords.js'
import { AccountError } from './orgs.js'

export interface Operator {
  id: number
  email: string
  createdAt: string
}

/** An address with one @ and a dot in its domain: enough to tell a typo, not a full RFC 5322 parser. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

const SELECT = 'SELECT id, email, created_at AS createdAt FROM operators'

function checkPassword(password: string): void {
  const fault = passwordFault(password)
  if (fault) throw new AccountError(fault)
}

export function createOperator(
  db: Db,
  input: { email: string; password: string },
  now = Date.now(),
): Operator {
  const email = input.email.trim()
  if (!EMAIL.test(email)) throw new AccountError(`"${input.email}" is not an email address`)
  checkPassword(input.password)
  if (findOperator(db, email)) throw new AccountError(`Operator ${email} already exists`)
  db.prepare('INSERT INTO operators (email, password_hash, created_at) VALUES (?, ?, ?)').run(
    email,
    hashPassword(input.password),
    new Date(now).toISOString(),
  )
  return findOperator(db, email) as Operator
}

export function findOperator(db: Db, email: string): Operator | undefined {
  return db.prepare(`${SELECT} WHERE email = ?`).get(email.trim()) as Operator | undefined
}

function requireOperator(db: Db, email: string): Operator {
  const operator = findOperator(db, email)
  if (!operator) throw new AccountError(`No operator ${email}; see \`svc operators list\``)
  return operator
}

export function listOperators(db: Db): Operator[] {
  return db.prepare(`${SELECT} ORDER BY email`).all() as Operator[]
}

export const hasOperators = (db: Db): boolean =>
  db.statement('SELECT EXISTS (SELECT 1 FROM operators)').pluck().get() === 1

/** The stored hash of an operator, for sign-in only. */
export function operatorCredentials(db: Db, email: string): { id: number; passwordHash: string } | undefined {
  return db
    .statement('SELECT id, password_hash AS passwordHash FROM operators WHERE email = ?')
    .get(email.trim()) as { id: number; passwordHash: string } | undefined
}

export function operatorById(db: Db, id: number): Operator | undefined {
  return db.statement(`${SELECT} WHERE id = ?`).get(id) as Operator | undefined
}

/** Sets a new password; the caller ends the operator's sessions (they live in the live file: sessions.ts). */
export function setOperatorPassword(db: Db, email: string, password: string): Operator {
  checkPassword(password)
  const operator = requireOperator(db, email)
  db.prepare('UPDATE operators SET password_hash = ? WHERE id = ?').run(hashPassword(password), operator.id)
  return operator
}

export function removeOperator(db: Db, email: string): Operator {
  const operator = requireOperator(db, email)
  db.prepare('DELETE FROM operators WHERE id = ?').run(operator.id)
  return operator
}
