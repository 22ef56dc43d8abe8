// Configuration as files: CONFIG_IMPORT at start-up, and GET /api/config/export.
import type { App } from '../platform/http/types.js';
import type { ConfigServices } from './import.js';
import { configFileRoutes } from './routes.js';
import { ConfigFileService } from './service.js';

export function createConfigFiles(needs: ConfigServices) {
  const configFiles = new ConfigFileService(needs);
  return { configFiles, routes: (app: App) => configFileRoutes(app, configFiles) };
}
