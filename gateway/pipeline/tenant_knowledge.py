"""The memory stage's reads of the tenant's knowledge base for one request: the
request's scope (the tenant's items without a namespace and those of the request's
namespace), its prepared index, a search answered from the memo and a search. Each
is a no-op without a knowledge service or with the policy's `knowledge.enabled` off."""

from __future__ import annotations

from gateway.knowledge.records import KnowledgeScope
from gateway.knowledge.service import KnowledgeService
from gateway.memory.records import Vector
from gateway.memory.retrieval import ScopeIndex, ScoredMemory
from gateway.pipeline.request import ChatRequest


class TenantKnowledge:
    def __init__(self, service: KnowledgeService | None) -> None:
        self._service = service

    def wanted(self, request: ChatRequest) -> bool:
        return self._service is not None and request.policy.knowledge.enabled

    async def index(self, request: ChatRequest) -> ScopeIndex | None:
        """The request's scope, prepared (one version read; rebuilt when the tenant's
        knowledge changed); None when knowledge is off."""
        if self._service is None or not self.wanted(request):
            return None
        return await self._service.scope_index(_scope(request))

    def memoised(
        self, request: ChatRequest, query: str, index: ScopeIndex | None
    ) -> list[ScoredMemory] | None:
        """The search of this question over `index`, when it was done lately."""
        if self._service is None or index is None or not index.size:
            return None
        return self._service.memoised(
            _scope(request),
            query,
            request.policy.knowledge.retrieve_top_k,
            request.policy.memory.ranking,
            index,
        )

    async def search(
        self, request: ChatRequest, query: str, vector: Vector | None, index: ScopeIndex | None
    ) -> list[ScoredMemory]:
        if self._service is None or index is None or not index.size:
            return []
        return await self._service.search(
            _scope(request),
            query,
            request.policy.knowledge.retrieve_top_k,
            request.policy.memory.ranking,
            vector,
            index=index,
        )


def _scope(request: ChatRequest) -> KnowledgeScope:
    return KnowledgeScope(request.tenant, request.namespace)
