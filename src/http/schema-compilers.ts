import { AjvCompiler } from '@fastify/ajv-compiler'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'

/**
 * The compilers of the route schemas, shared by every app this process builds (Fastify's `schemaController` option).
 * Fastify makes new ones for each app and compiles every request schema (Ajv) and every answer's schema
 * (fast-json-stringify) again at each start: with some 40 operations of about 8 documented answers each, that was
 * half of a start's time, paid again by every service a test suite or a cluster worker starts. The schemas are the
 * same constants in every app, so what is compiled once serves them all:
 * - the validators come from one pool of Ajv instances, one per set of shared schemas and Ajv options, whose Ajv
 *   keeps each compiled schema;
 * - a serializer is kept by the text of its schema, its shared schemas and its options, which are all it depends on.
 * The compiled functions are pure: sharing them changes no answer.
 */
type SchemaController = NonNullable<FastifyServerOptions['schemaController']>
type CompilersFactory = NonNullable<SchemaController['compilersFactory']>
type BuildSerializer = NonNullable<CompilersFactory['buildSerializer']>
type Serializer = (data: unknown) => string

const sharedValidators = AjvCompiler() as unknown as NonNullable<CompilersFactory['buildValidator']>
const selectSerializer = SerializerSelector()
const serializers = new Map<string, Serializer>()

const buildSharedSerializer = ((externalSchemas: unknown, serializerOptions: unknown) => {
  const compile = selectSerializer(
    externalSchemas as Parameters<typeof selectSerializer>[0],
    serializerOptions as Parameters<typeof selectSerializer>[1],
  )
  const shared = JSON.stringify([externalSchemas, serializerOptions])
  return (route: Parameters<typeof compile>[0]) => {
    const key = `${shared}${JSON.stringify(route.schema)}`
    let serialize = serializers.get(key)
    if (serialize === undefined) {
      serialize = compile(route) as Serializer
      serializers.set(key, serialize)
    }
    return serialize
  }
}) as unknown as BuildSerializer

/** Fastify's `schemaController` option: the compilers above. */
export const sharedSchemaController: SchemaController = {
  compilersFactory: { buildValidator: sharedValidators, buildSerializer: buildSharedSerializer },
}
