/** The Testcontainers module's default Elasticsearch is the version the project provisions and tests. */
import { expect, it } from 'vitest';
import { ELASTICSEARCH_IMAGE } from '../../packages/testcontainers/src/index.ts';
import { ES_VERSION } from '../../scripts/elasticsearch.ts';

it("the module's default Elasticsearch is the version the project provisions and tests", () => {
  expect(ELASTICSEARCH_IMAGE).toBe(`docker.elastic.co/elasticsearch/elasticsearch:${ES_VERSION}`);
});
