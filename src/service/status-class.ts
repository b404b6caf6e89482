// The status_class label of autoclaim_requests_seconds: a bounded label whatever the server answers.
export type StatusClass = '1xx' | '2xx' | '3xx' | '4xx' | '5xx' | 'none';

export function statusClass(status: number | undefined): StatusClass {
  if (status === undefined || !Number.isInteger(status) || status < 100 || status > 599) return 'none';
  return `${Math.floor(status / 100)}xx` as StatusClass;
}
