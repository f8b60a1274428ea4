#!/usr/bin/env bash
# Deploy an image through the API with an API token (POST /api/tokens). Usage:
#   SVC_URL=http://server:3000 SVC_TOKEN=svc_... ./deploy-with-curl.sh <app-id> <image-ref>
set -euo pipefail
app_id=$1 image=$2
deploy=$(curl -fsS -X POST "$SVC_URL/api/apps/$app_id/deploys" \
  -H "Authorization: Bearer $SVC_TOKEN" -H 'Content-Type: application/json' \
  --data "{\"image_ref\": \"$image\"}")
id=$(printf '%s' "$deploy" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
# Follow the pipeline's events until the deploy ends.
curl -fsSN "$SVC_URL/api/deploys/$id/events/stream" -H "Authorization: Bearer $SVC_TOKEN"
