import { text } from 'node:stream/consumers'
import { UserError } from '../userError.js'

/**
 * A password the way `docker login` takes one: from standard input with `--password-stdin` (its first line,
 * so that `echo … |` works), else typed at a prompt that does not echo, twice. Never from a flag: flags end
 * up in shell history and process lists.
 */
export async function readNewPassword(options: { fromStdin: boolean; prompt: string }): Promise<string> {
  if (options.fromStdin) return (await text(process.stdin)).split(/\r?\n/)[0] ?? ''
  if (!process.stdin.isTTY) {
    throw new UserError('No terminal to type a password at: pipe it in with --password-stdin')
  }
  const first = await promptHidden(`${options.prompt}: `)
  const second = await promptHidden('Again: ')
  if (first !== second) throw new UserError('The two passwords differ; nothing was changed')
  return first
}

/** Reads one line from the terminal in raw mode, echoing nothing; Ctrl-C stops the command. */
function promptHidden(question: string): Promise<string> {
  const input = process.stdin
  process.stderr.write(question)
  input.setRawMode(true)
  input.resume()
  return new Promise((resolve) => {
    let typed = ''
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString('utf8')) {
        if (char === '\u0003') {
          process.stderr.write('\n')
          process.exit(130)
        } else if (char === '\r' || char === '\n') {
          input.off('data', onData)
          input.setRawMode(false)
          input.pause()
          process.stderr.write('\n')
          resolve(typed)
          return
        } else if (char === '\u007f' || char === '\b') typed = [...typed].slice(0, -1).join('')
        else typed += char
      }
    }
    input.on('data', onData)
  })
}
