// Configuration as files: a folder imported at start-up (CONFIG_IMPORT), and a tenant's
// configuration exported in the same layout.
import { statSync } from 'node:fs';
import type { ImportEnvironment } from './environment.js';
import { type ConfigExport, ConfigExporter } from './export.js';
import { ConfigImporter, type ConfigServices, type ImportSummary } from './import.js';
import { ConfigImportError, readImportFolder } from './read.js';

export { type ImportEnvironment, importEnvironment } from './environment.js';
export type { ConfigServices, ImportSummary } from './import.js';
export { ConfigImportError } from './read.js';

export class ConfigFileService {
  private readonly importer: ConfigImporter;
  private readonly exporter: ConfigExporter;

  constructor(services: ConfigServices) {
    this.importer = new ConfigImporter(services);
    this.exporter = new ConfigExporter(services);
  }

  /**
   * Every file of the folder is read and checked before anything is written; `env` supplies the
   * values of {"env": "NAME"} references, as far as the operator allows them (importEnvironment).
   */
  async importFolder(dir: string, env: ImportEnvironment): Promise<ImportSummary> {
    if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new ConfigImportError([`${dir}: no such folder`]);
    return this.importer.importTenants(readImportFolder(dir, env));
  }

  export(tenantId: string): Promise<ConfigExport> {
    return this.exporter.export(tenantId);
  }
}
