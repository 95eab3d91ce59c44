import { GenericContainer, getContainerRuntimeClient, Wait, type StartedTestContainer } from 'testcontainers';
import { describe } from 'vitest';
import { createKurrentDbEventStore } from '../../src/eventstore/kurrentdb/kurrentdb-event-store.js';
import { describeEventStoreContract, type ContractSubject } from './eventstore.contract.js';

/**
 * The contract suite against KurrentDB (>= 25.1, for multiStreamAppend).
 * - EVENTSTORE_URL=kurrentdb://… (or esdb://…): that server. Its $all may hold other data; the
 *   contract isolates its tests by unique stream categories.
 * - otherwise, with a container runtime (Docker, Podman…): one fresh in-memory, insecure KurrentDB
 *   container for this file (KURRENTDB_IMAGE overrides the image).
 * - otherwise: reported as skipped, with the reason in the suite name.
 */
const IMAGE = process.env.KURRENTDB_IMAGE ?? 'docker.kurrent.io/kurrent-latest/kurrentdb:25.1';
const HTTP_PORT = 2113;

const configuredUrl = /^(?:kurrentdb|kurrent|kdb|esdb)(?:\+discover)?:\/\//i.test(process.env.EVENTSTORE_URL ?? '')
  ? process.env.EVENTSTORE_URL
  : undefined;
const containerRuntime =
  configuredUrl === undefined
    ? await getContainerRuntimeClient().then(
        () => true,
        () => false,
      )
    : false;

const startContainer = async (): Promise<StartedTestContainer> =>
  new GenericContainer(IMAGE)
    .withEnvironment({
      KURRENTDB_CLUSTER_SIZE: '1',
      KURRENTDB_INSECURE: 'true',
      KURRENTDB_RUN_PROJECTIONS: 'None',
      KURRENTDB_MEM_DB: 'true',
    })
    .withExposedPorts(HTTP_PORT)
    // gRPC and HTTP share port 2113; /health/live answers 204 once the node serves requests
    .withWaitStrategy(Wait.forHttp('/health/live', HTTP_PORT).forStatusCode(204))
    .withStartupTimeout(120_000)
    .start();

const setup = async (): Promise<ContractSubject> => {
  if (configuredUrl !== undefined) {
    const store = createKurrentDbEventStore(configuredUrl);
    return { store, teardown: () => store.close() };
  }
  const container = await startContainer();
  const store = createKurrentDbEventStore(`kurrentdb://${container.getHost()}:${container.getMappedPort(HTTP_PORT)}?tls=false`);
  return {
    store,
    teardown: async () => {
      await store.close();
      await container.stop();
    },
  };
};

const available = configuredUrl !== undefined || containerRuntime;
const title = configuredUrl !== undefined
  ? 'KurrentDB at EVENTSTORE_URL'
  : containerRuntime
    ? `KurrentDB in a container (${IMAGE})`
    : 'KurrentDB event store contract (skipped: no EVENTSTORE_URL and no container runtime)';

describe.skipIf(!available)(title, () => {
  // KurrentDB has no global event-id index: an id reused in another stream is not refused
  describeEventStoreContract('KurrentDB', setup, { uniqueEventIdsAcrossStreams: false });
});
