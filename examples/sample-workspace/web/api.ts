// A small client for the service's HTTP API.

export interface Usage {
  endpoint: string;
  count: number;
}

const BASE_URL = "/api/v1";

export async function fetchUsage(days: number): Promise<Usage[]> {
  const response = await fetch(`${BASE_URL}/usage?days=${days}`);
  if (!response.ok) {
    console.log("usage request failed", response.status);
    throw new Error(`usage request failed: ${response.status}`);
  }
  return (await response.json()) as Usage[];
}

export async function resetUsage(endpoint: string): Promise<void> {
  console.log("resetting usage for", endpoint);
  await fetch(`${BASE_URL}/usage/${encodeURIComponent(endpoint)}`, { method: "DELETE" });
}
