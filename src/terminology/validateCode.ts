import type { EndpointResponse } from '../api/endpoint.js'
import type { Terminology } from './terminology.js'
import type { Coding } from '../api/params.js'
import { ApiError } from '../http/errors.js'
import { parameters, valued } from './parameters.js'
import { forward } from './remote.js'
import { resolveCodeSystem } from './sources.js'

export interface ValidateCodeInput {
  url?: string
  code?: string
  version?: string
  display?: string
  coding?: Coding
  codeableConcept?: { coding: Coding[] }
}

interface Verdict {
  result: boolean
  message?: string
  code: string
  system?: string
  version?: string
  display?: string
}

const resultOf = (answer: unknown): Verdict | undefined => {
  const list = (answer as { parameter?: { name?: string; [key: string]: unknown }[] }).parameter ?? []
  const get = (name: string) => {
    const item = list.find((p) => p.name === name)
    return item && Object.entries(item).find(([key]) => key.startsWith('value'))?.[1]
  }
  const result = get('result')
  if (typeof result !== 'boolean') return undefined
  const text = (name: string) => (typeof get(name) === 'string' ? (get(name) as string) : undefined)
  return {
    result,
    message: text('message'),
    display: text('display'),
    code: text('code') ?? '',
    system: text('system'),
    version: text('version'),
  }
}

/** One coding against its code system: valid, invalid with a reason, or a thrown failure to get an answer. */
async function checkCoding(
  terminology: Terminology,
  coding: Coding,
  parameter: string,
  signal: AbortSignal,
): Promise<Verdict> {
  if (!coding.system) {
    return { result: false, code: coding.code, message: `The coding "${coding.code}" names no code system` }
  }
  const resolved = resolveCodeSystem(terminology, coding.system, coding.version, parameter)
  if (resolved.kind === 'remote') {
    const body = parameters([
      { name: 'url', valueUri: coding.system },
      { name: 'code', valueCode: coding.code },
      ...valued('version', 'String', coding.version),
      ...valued('display', 'String', coding.display),
    ])
    const answer = await forward(
      resolved.source,
      { path: 'CodeSystem/$validate-code', body, signal },
      'Parameters',
    )
    const verdict = answer.status === 404 ? undefined : resultOf(answer.body)
    if (!verdict) {
      throw new ApiError(502, {
        detail: `${resolved.source.name} answered $validate-code without a result.`,
      })
    }
    return {
      ...verdict,
      code: coding.code,
      system: coding.system,
      version: verdict.version ?? coding.version,
    }
  }
  const { system } = resolved
  const concept = terminology.releases.concept(system, coding.code)?.concept
  const base = { code: coding.code, system: system.url, version: system.version }
  if (!concept) {
    return {
      ...base,
      result: false,
      message: `Unknown code "${coding.code}" in ${system.url} (release ${system.version})`,
    }
  }
  const display = concept.display ?? concept.code
  if (coding.display !== undefined && coding.display !== display) {
    return {
      ...base,
      result: false,
      display,
      message: `Wrong display "${coding.display}" for ${system.url}#${coding.code}: it is "${display}"`,
    }
  }
  return { ...base, result: true, display }
}

/**
 * CodeSystem/$validate-code: does the code exist in the code system? An unknown code is `result=false`
 * with a message; a codeableConcept is valid when any coding is. When no coding validates and one could
 * not be checked (no source, a failing source), that failure is the answer: never a guessed "false".
 */
export async function validateCode(
  terminology: Terminology,
  input: ValidateCodeInput,
  signal: AbortSignal,
): Promise<EndpointResponse> {
  let codings: { coding: Coding; parameter: string }[]
  if (input.codeableConcept) {
    codings = input.codeableConcept.coding.map((coding) => ({ coding, parameter: 'codeableConcept' }))
  } else if (input.coding) {
    codings = [
      { coding: { ...input.coding, version: input.coding.version ?? input.version }, parameter: 'coding' },
    ]
  } else {
    const coding = {
      system: input.url,
      code: input.code as string,
      version: input.version,
      display: input.display,
    }
    codings = [{ coding, parameter: 'url' }]
  }
  const verdicts: Verdict[] = []
  let failure: unknown
  for (const { coding, parameter } of codings) {
    try {
      const verdict = await checkCoding(terminology, coding, parameter, signal)
      if (verdict.result) {
        verdicts.splice(0, verdicts.length, verdict)
        failure = undefined
        break
      }
      verdicts.push(verdict)
    } catch (error) {
      failure ??= error
    }
  }
  if (failure !== undefined) throw failure
  const chosen = verdicts.find((verdict) => verdict.result) ?? verdicts[0]
  if (!chosen) throw new Error('validate-code without a coding')
  const messages = verdicts.map((verdict) => verdict.message).filter((text) => text !== undefined)
  return {
    body: parameters([
      { name: 'result', valueBoolean: chosen.result },
      ...valued('message', 'String', chosen.result ? chosen.message : messages.join('; ') || undefined),
      ...valued('display', 'String', chosen.display),
      ...valued('code', 'Code', chosen.code),
      ...valued('system', 'Uri', chosen.system),
      ...valued('version', 'String', chosen.version),
    ]),
  }
}
