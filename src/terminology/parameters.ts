/** Builders for FHIR Parameters results. */

export interface ParametersParameter {
  name: string
  part?: ParametersParameter[]
  [value: `value${string}`]: unknown
}

export interface Parameters {
  resourceType: 'Parameters'
  parameter: ParametersParameter[]
}

export const parameters = (parameter: ParametersParameter[]): Parameters => ({
  resourceType: 'Parameters',
  parameter,
})

/** One parameter carrying `value<type>`, or nothing when the value is absent. */
export function valued(name: string, type: string, value: unknown): ParametersParameter[] {
  return value === undefined || value === null ? [] : [{ name, [`value${type}`]: value }]
}
