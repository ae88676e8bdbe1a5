from django.contrib import admin
from django.db import models

from pricing.models import Accelerator, InstanceType, Price, PriceSource, Provider, Region


@admin.register(Accelerator)
class AcceleratorAdmin(admin.ModelAdmin):
    list_display = [
        "slug",
        "vendor",
        "model",
        "variant",
        "memory_gb",
        "bf16_tflops_dense",
        "memory_bandwidth_gbps",
        "tdp_watts",
    ]
    list_filter = ["vendor", "architecture"]
    search_fields = ["slug", "model", "variant"]
    # Django 5.x warns on URLField forms without a scheme choice (default changes in 6.0).
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}


@admin.register(Provider)
class ProviderAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "kind"]


@admin.register(Region)
class RegionAdmin(admin.ModelAdmin):
    list_display = ["code", "provider"]
    list_filter = ["provider"]
    search_fields = ["code"]


@admin.register(InstanceType)
class InstanceTypeAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "provider",
        "accelerator",
        "gpu_count",
        "vcpus",
        "memory_gib",
        "intra_node_interconnect",
        "network_gbps",
    ]
    list_filter = ["provider", "accelerator", "intra_node_interconnect"]
    search_fields = ["name"]
    list_select_related = ["provider", "accelerator"]


@admin.register(PriceSource)
class PriceSourceAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "snapshot_date", "licence"]


@admin.register(Price)
class PriceAdmin(admin.ModelAdmin):
    list_display = [
        "instance_type",
        "region",
        "purchase_option",
        "usd_per_hour",
        "as_of",
        "source",
        "is_derived",
        "is_current",
    ]
    list_filter = [
        "purchase_option",
        "is_current",
        "is_derived",
        "source",
        "instance_type__provider",
    ]
    search_fields = ["instance_type__name", "region__code"]
    list_select_related = ["instance_type__provider", "region", "source"]
    raw_id_fields = ["instance_type", "region"]
