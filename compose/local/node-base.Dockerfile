# Node 24 on the local Debian base, laid out as in the official `node` image (/usr/local/bin/node,
# npm under /usr/local/lib/node_modules), for docker-compose.local.yml: the project's Dockerfile is
# then built FROM it unchanged. The context (prepared by scripts/compose-check.sh) holds this
# machine's Node 24 binary (node_modules/node) and npm, and the extra certificate authorities
# this machine's Node trusts (its NODE_EXTRA_CA_CERTS, empty when none), so `npm ci` in the
# build reaches the registry through the same TLS-inspecting egress as the host.
FROM localhost/debian:bookworm
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY extra-ca.crt /usr/local/share/node-extra-ca.crt
ENV NODE_EXTRA_CA_CERTS=/usr/local/share/node-extra-ca.crt
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && node --version && npm --version
