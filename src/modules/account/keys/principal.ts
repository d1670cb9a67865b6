import { routesFor } from '../../../lib/route.js';
import type { Project } from '../projects/projects.repo.js';
import type { ApiKey } from './keys.repo.js';
import type { Scope } from './scopes.js';

/** Who calls the API: an API key and the project it acts for (interface §5). */
export interface Principal {
  key: ApiKey;
  project: Project;
}

/** The route helper of a module's /v1 routes: called with a key that holds the route's scope. */
export const keyedRoutes = <Services>() => routesFor<Services, Principal, Scope>();
