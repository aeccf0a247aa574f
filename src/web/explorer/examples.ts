/**
 * What the explorer opens with: a query anyone may run, and one that needs an agent's token with the
 * header it goes in. Shown only while the browser has no explorer state of its own saved.
 */
const AUTHORIZATION_NOTE = `# Operations about an agent need its credential: the Headers tab (below the editor) takes
#   {"Authorization": "Bearer agt_…"}   an agent's token (POST /api/agents answers it), or
#   {"Authorization": "Bearer <JWT>"}    a signed-in person's token (/browse, POST /api/auth/verify).
# Subscriptions run over graphql-ws on this same path, with the same headers.`;

export const EXAMPLE_TABS = [
  {
    query: `# GraphQL explorer for this gateway. Run an operation with Ctrl-Enter (⌘-Enter on a Mac);
# the Docs and Schema buttons on the left list every type and field.
${AUTHORIZATION_NOTE}

# Needs no credential: the cheapest H100 prices right now.
query GpuPrices {
  gpuPrices(gpu: "h100") {
    provider
    onDemandPriceUsd
    spotPriceUsd
    freshness
    lastSeen
  }
}
`,
    headers: '{}',
  },
  {
    query: `# The agent whose token is in the Headers tab, with its children.
# Replace agt_PASTE_YOUR_AGENT_TOKEN in the Headers tab with the token, then run.
query Me {
  me {
    id
    name
    createdAt
    children(first: 10) {
      id
      name
    }
  }
}
`,
    headers: JSON.stringify({ Authorization: 'Bearer agt_PASTE_YOUR_AGENT_TOKEN' }, null, 2),
  },
];

/** Headers of a tab opened later: the place for the credential, empty until one is pasted. */
export const NEW_TAB_HEADERS = '{}';
