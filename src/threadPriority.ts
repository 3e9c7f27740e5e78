import { execFileSync } from 'node:child_process'
import { readlinkSync } from 'node:fs'

/** Runs util-linux's `chrt --idle` with `args` (Node has no call for the policy); false where it fails. */
export function chrtIdle(args: string[]): boolean {
  try {
    execFileSync('chrt', ['--idle', ...args], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/**
 * Puts the calling thread, alone, under Linux's SCHED_IDLE policy: it then runs only on CPU time nothing else
 * wants, and a core running nothing else counts as free when the kernel places a woken task (a server woken
 * by a request goes there at once). For a helper thread whose work its caller takes over when it is starved.
 * False where the policy cannot be had (another platform, no chrt).
 */
export function idleThisThread(): boolean {
  let tid: string | undefined
  try {
    // "<pid>/task/<tid>": Node does not say a thread's own id.
    tid = readlinkSync('/proc/thread-self').split('/').pop()
  } catch {
    return false
  }
  return tid !== undefined && chrtIdle(['--pid', '0', tid])
}
