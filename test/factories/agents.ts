import type { TestApp } from '../harness.js';

export interface AgentWithToken {
  id: string;
  token: string;
}

let sequence = 0;

/** Claims the bootstrap agent of a fresh test database. */
export async function bootstrapAgent(t: TestApp, name = 'root'): Promise<AgentWithToken> {
  const response = await t.rest({ method: 'POST', url: '/api/agents', payload: { name, bootstrap: true } });
  if (response.statusCode !== 201) throw new Error(`bootstrap failed: ${response.statusCode} ${response.body}`);
  const body = response.json();
  return { id: body.id, token: body.public_token };
}

/** Creates a child agent of `parent` through the public API. */
export async function createAgent(t: TestApp, parent: AgentWithToken, name = `agent-${++sequence}`): Promise<AgentWithToken> {
  const response = await t.rest({
    method: 'POST',
    url: '/api/agents',
    headers: { authorization: `Bearer ${parent.token}` },
    payload: { name },
  });
  if (response.statusCode !== 201) throw new Error(`create agent failed: ${response.statusCode} ${response.body}`);
  const body = response.json();
  return { id: body.id, token: body.public_token };
}
