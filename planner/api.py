"""The JSON API: one NinjaAPI, routers from each app; schema at /api/openapi.json."""

from ninja import NinjaAPI

from pricing.api import router as pricing_router

api = NinjaAPI(
    title="GPU Planner API",
    version="1",
    description="GPU catalog, cloud prices, simulations and plans. Prices are USD per hour.",
    openapi_url="/openapi.json",
    docs_url="/docs",
)
api.add_router("/", pricing_router)
api.add_router("/histories", "planner.api_histories.router")
api.add_router("/simulations", "simulator.api.router")
api.add_router("/plans", "planner.plans.api.router")
