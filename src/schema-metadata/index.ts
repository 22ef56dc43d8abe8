// Schema metadata (TS11): publishing a credential configuration's schema to the registrar's
// catalog, reading the catalog, and resolving another issuer's signed schema metadata into a query.
import type { App } from '../platform/http/types.js';
import { type ResolverDeps, SchemaMetadataResolver } from './resolve.js';
import { schemaMetadataRoutes } from './routes.js';
import { type SchemaMetadataDeps, SchemaMetadataService } from './service.js';

export type SchemaMetadataNeeds = SchemaMetadataDeps & ResolverDeps;

export function createSchemaMetadata(needs: SchemaMetadataNeeds) {
  const service = new SchemaMetadataService(needs);
  const resolver = new SchemaMetadataResolver(needs);
  return { routes: (app: App) => schemaMetadataRoutes(app, service, resolver) };
}
