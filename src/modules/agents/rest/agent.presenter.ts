import type { AgentRecord } from '../agent.service.js';

/** Who may ask for the agent's free/busy, as `GET`/`PUT /api/agents/me/free-busy-visibility` answer it. */
export const presentFreeBusyVisibility = (agent: AgentRecord) => ({ visibility: agent.freeBusyVisibility });
