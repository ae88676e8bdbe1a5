"""GPU catalog and cloud price tables."""

from datetime import date

from django.conf import settings
from django.db import models

from planner.core.purchase_options import PAYMENT_OPTIONS, PURCHASE_OPTIONS


class Accelerator(models.Model):
    """One GPU variant with its vendor-published dense peak rates (TFLOPS unless stated)."""

    slug = models.SlugField(max_length=64, unique=True)
    vendor = models.CharField(max_length=32)
    model = models.CharField(max_length=64)
    variant = models.CharField(max_length=64)
    architecture = models.CharField(max_length=64, blank=True)
    year = models.PositiveSmallIntegerField(null=True, blank=True)
    memory_gb = models.FloatField(help_text="GB of device memory")
    memory_type = models.CharField(max_length=32, blank=True)
    memory_bandwidth_gbps = models.FloatField(null=True, blank=True, help_text="GB/s")
    fp32_tflops = models.FloatField(null=True, blank=True)
    tf32_tflops_dense = models.FloatField(null=True, blank=True)
    fp16_tflops_dense = models.FloatField(null=True, blank=True)
    bf16_tflops_dense = models.FloatField(null=True, blank=True)
    fp8_tflops_dense = models.FloatField(null=True, blank=True)
    int8_tops_dense = models.FloatField(null=True, blank=True)
    tensor_cores = models.PositiveIntegerField(null=True, blank=True)
    interconnect = models.CharField(
        max_length=64, blank=True, help_text="NVLink generation or Infinity Fabric links"
    )
    interconnect_bandwidth_gbps = models.FloatField(
        null=True, blank=True, help_text="GB/s per GPU, bidirectional (NVLink / Infinity Fabric)"
    )
    pcie_gen = models.PositiveSmallIntegerField(null=True, blank=True)
    tdp_watts = models.PositiveIntegerField(null=True, blank=True)
    source_url = models.URLField(max_length=500, blank=True)
    notes = models.TextField(blank=True)

    class Meta:
        ordering = ["vendor", "model", "variant"]

    def __str__(self) -> str:
        return self.name

    @property
    def name(self) -> str:
        return f"{self.model} {self.variant}"

    @property
    def form_factor(self) -> str:
        return self.variant.split("-")[0]

    @property
    def has_tensor_rates(self) -> bool:
        """Whether any tensor-core peak (TF32, FP16 or BF16) is published."""
        peaks = (self.tf32_tflops_dense, self.fp16_tflops_dense, self.bf16_tflops_dense)
        return any(p is not None for p in peaks)

    def peak_tflops(self, precision: str) -> float | None:
        """Dense peak for a precision key: fp32, tf32, fp16, bf16, fp8 or int8."""
        field = {
            "fp32": "fp32_tflops",
            "tf32": "tf32_tflops_dense",
            "fp16": "fp16_tflops_dense",
            "bf16": "bf16_tflops_dense",
            "fp8": "fp8_tflops_dense",
            "int8": "int8_tops_dense",
        }[precision]
        value: float | None = getattr(self, field)
        return value


class Provider(models.Model):
    class Kind(models.TextChoices):
        HYPERSCALER = "hyperscaler", "Hyperscaler"
        GPU_CLOUD = "gpu_cloud", "GPU cloud"
        MARKETPLACE = "marketplace", "Marketplace"

    slug = models.SlugField(max_length=32, unique=True)
    name = models.CharField(max_length=64)
    kind = models.CharField(max_length=16, choices=Kind.choices)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Region(models.Model):
    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="regions")
    code = models.CharField(max_length=64)

    class Meta:
        ordering = ["provider__slug", "code"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "code"], name="region_unique_code")
        ]

    def __str__(self) -> str:
        return f"{self.provider.slug}:{self.code}"


class InstanceType(models.Model):
    """A rentable machine shape: host plus a fixed number of one accelerator."""

    class Interconnect(models.TextChoices):
        NVSWITCH = "nvswitch", "NVLink + NVSwitch"
        NVLINK = "nvlink", "NVLink (direct or bridge)"
        INFINITY_FABRIC = "xgmi", "Infinity Fabric"
        PCIE = "pcie", "PCIe"
        NONE = "none", "Single GPU"

    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="instance_types")
    name = models.CharField(max_length=96)
    accelerator = models.ForeignKey(
        Accelerator, on_delete=models.PROTECT, related_name="instance_types"
    )
    provider_accelerator_name = models.CharField(
        max_length=64, help_text="The accelerator name as the provider's catalog writes it"
    )
    gpu_count = models.PositiveSmallIntegerField()
    vcpus = models.PositiveSmallIntegerField(null=True, blank=True)
    memory_gib = models.FloatField(null=True, blank=True)
    intra_node_interconnect = models.CharField(max_length=16, choices=Interconnect.choices)
    intra_node_bandwidth_gbps = models.FloatField(
        null=True, blank=True, help_text="GB/s per GPU between GPUs of one node"
    )
    network_gbps = models.FloatField(
        null=True, blank=True, help_text="Gbit/s of scale-out network per node"
    )
    host_machine_type = models.CharField(
        max_length=64, blank=True, help_text="GCP: the host VM the GPUs attach to"
    )

    class Meta:
        ordering = ["provider__slug", "name"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "name"], name="instance_type_unique_name")
        ]

    def __str__(self) -> str:
        return f"{self.provider.slug}:{self.name}"


class PriceSource(models.Model):
    """A dated snapshot or file that prices were taken from."""

    slug = models.SlugField(max_length=96, unique=True)
    name = models.CharField(max_length=200)
    url = models.CharField(max_length=500, blank=True)
    licence = models.CharField(max_length=200, blank=True)
    snapshot_date = models.DateField()
    notes = models.TextField(blank=True)

    class Meta:
        ordering = ["-snapshot_date", "slug"]

    def __str__(self) -> str:
        return self.name


# Choices from the option tables (planner.core.purchase_options): member ON_DEMAND = "on_demand".
PurchaseOption = models.TextChoices(  # type: ignore[misc]
    "PurchaseOption", [(o.code.upper(), (o.code, o.label)) for o in PURCHASE_OPTIONS])
PaymentOption = models.TextChoices(  # type: ignore[misc]
    "PaymentOption", [(p.code.upper() or "NONE", (p.code, p.label)) for p in PAYMENT_OPTIONS])


class OfferingClass(models.TextChoices):
    NONE = "", "—"
    STANDARD = "standard", "Standard"
    CONVERTIBLE = "convertible", "Convertible"


def price_basis(*, is_derived: bool, is_estimated: bool) -> str:
    """A price's basis from its two flags (Price.basis, and rows read with values_list)."""
    return "estimated" if is_estimated else "derived" if is_derived else "listed"


class Price(models.Model):
    """USD per instance-hour for one instance type, region, purchase option and payment option,
    as of a date. For commitments `usd_per_hour` is the effective rate: the hourly fee plus the
    upfront spread over the term (8,760 h a year)."""

    instance_type = models.ForeignKey(InstanceType, on_delete=models.CASCADE, related_name="prices")
    region = models.ForeignKey(Region, on_delete=models.CASCADE, related_name="prices")
    purchase_option = models.CharField(max_length=24, choices=PurchaseOption.choices)
    payment_option = models.CharField(
        max_length=16, choices=PaymentOption.choices, blank=True, default=""
    )
    offering_class = models.CharField(
        max_length=12, choices=OfferingClass.choices, blank=True, default=""
    )
    usd_per_hour = models.DecimalField(max_digits=14, decimal_places=6)
    upfront_usd = models.DecimalField(
        max_digits=14, decimal_places=2, null=True, blank=True,
        help_text="Paid at purchase per instance for the whole term (null: not published)",
    )
    recurring_usd_per_hour = models.DecimalField(
        max_digits=14, decimal_places=6, null=True, blank=True,
        help_text="The hourly fee of a commitment besides its upfront (null: not published)",
    )
    zone_low_usd_per_hour = models.DecimalField(
        max_digits=14, decimal_places=6, null=True, blank=True,
        help_text="Per-zone prices (spot): the cheapest zone; usd_per_hour is the median zone",
    )
    zone_high_usd_per_hour = models.DecimalField(
        max_digits=14, decimal_places=6, null=True, blank=True,
        help_text="Per-zone prices (spot): the dearest zone",
    )
    as_of = models.DateField()
    source = models.ForeignKey(PriceSource, on_delete=models.PROTECT, related_name="prices")
    zone = models.CharField(
        max_length=64, blank=True, help_text="Zone where a per-zone price (spot) is lowest"
    )
    is_derived = models.BooleanField(default=False)
    derivation_basis = models.TextField(blank=True)
    is_estimated = models.BooleanField(
        default=False, help_text="Not a provider's list price (excluded from recommendations "
        "unless the user opts in)",
    )
    is_current = models.BooleanField(
        default=True, help_text="False when a newer price for the same key exists (history)"
    )

    class Meta:
        ordering = ["instance_type__name", "region__code", "purchase_option", "-as_of"]
        constraints = [
            models.UniqueConstraint(
                fields=["instance_type", "region", "purchase_option", "payment_option",
                        "offering_class", "source", "as_of"],
                name="price_unique_key_with_payment",
            ),
            models.CheckConstraint(
                condition=models.Q(usd_per_hour__gte=0), name="price_non_negative"
            ),
        ]
        indexes = [
            models.Index(fields=["is_current", "purchase_option", "usd_per_hour"]),
            models.Index(fields=["instance_type", "region", "purchase_option", "as_of"]),
        ]

    def __str__(self) -> str:
        return f"{self.instance_type} {self.region.code} {self.purchase_option} {self.usd_per_hour}"

    @property
    def basis(self) -> str:
        """listed (the provider's list), derived (computed, see derivation_basis) or estimated."""
        return price_basis(is_derived=self.is_derived, is_estimated=self.is_estimated)

    @property
    def usd_per_gpu_hour(self) -> float:
        return float(self.usd_per_hour) / self.instance_type.gpu_count

    def age_days(self, today: date) -> int:
        return (today - self.as_of).days


class CarbonBasis(models.TextChoices):
    """How emissions are accounted (GHG Protocol Scope 2): the local grid's average
    (location) or net of the operator's clean-energy purchases (market)."""

    LOCATION = "location", "Location-based"
    MARKET = "market", "Market-based"


class GridIntensity(models.Model):
    """One published grid carbon intensity of a cloud region (gCO2e per kWh drawn), with its
    year, source and accounting basis. Several rows per region (years, sources); `is_current`
    marks the one plans use per (provider, region, basis): see pricing.carbon.parse."""

    provider = models.ForeignKey(Provider, on_delete=models.CASCADE,
                                 related_name="grid_intensities")
    region_code = models.CharField(max_length=64, help_text="as the price catalog writes it")
    basis = models.CharField(max_length=12, choices=CarbonBasis.choices)
    metric = models.CharField(max_length=40, help_text="the source's own metric name")
    g_co2e_per_kwh = models.FloatField(help_text="gCO2e per kWh")
    year = models.CharField(max_length=80, help_text="data year as the source states it")
    data_year = models.PositiveSmallIntegerField(null=True, blank=True,
                                                 help_text="the year as a number, if stated")
    cfe_fraction = models.FloatField(null=True, blank=True,
                                     help_text="Google carbon-free energy share (0-1)")
    location = models.CharField(max_length=120, blank=True)
    source = models.CharField(max_length=300)
    source_url = models.CharField(max_length=500)
    source_commit = models.CharField(max_length=40)
    as_of = models.DateField(help_text="date of the source commit the value was read at")
    licence = models.CharField(max_length=300)
    notes = models.TextField(blank=True)
    is_current = models.BooleanField(default=False)

    class Meta:
        ordering = ["provider__slug", "region_code", "basis", "-data_year"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "region_code", "metric", "source", "year"],
                                    name="grid_intensity_unique_key"),
            models.CheckConstraint(condition=models.Q(g_co2e_per_kwh__gte=0),
                                   name="grid_intensity_non_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.provider.slug}:{self.region_code} {self.g_co2e_per_kwh:g} g/kWh"


class DatacenterPue(models.Model):
    """Power usage effectiveness (facility energy / IT energy) of a provider's data centres:
    a fleet average (`region_code` "") or one region's."""

    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="pues")
    region_code = models.CharField(max_length=64, blank=True)
    pue = models.FloatField()
    year = models.CharField(max_length=80)
    source = models.CharField(max_length=300)
    source_url = models.CharField(max_length=500)
    source_commit = models.CharField(max_length=40)
    as_of = models.DateField()
    licence = models.CharField(max_length=300)
    notes = models.TextField(blank=True)

    class Meta:
        ordering = ["provider__slug", "region_code"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "region_code"], name="pue_unique_key"),
            models.CheckConstraint(condition=models.Q(pue__gte=1), name="pue_at_least_one"),
        ]

    def __str__(self) -> str:
        return f"{self.provider.slug}:{self.region_code or 'fleet'} PUE {self.pue:g}"


class ExplorerColumns(models.Model):
    """The prices explorer columns a user chose (pricing.explorer.COLUMNS keys, page order)."""

    owner = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="explorer_columns")
    columns = models.JSONField(default=list)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.owner_id}: {', '.join(self.columns)}"


class CatalogStamp(models.Model):
    """One row that database triggers bump on every insert, update or delete of GPUs,
    providers, regions, instance types and prices (migration 0005), however the change is
    made (importers, admin, bulk updates, SQL). `catalog_version()` reads it: the key of cached
    catalog pages, one primary-key read instead of aggregates over every price."""

    token = models.CharField(max_length=32, help_text="Random per database: keys never collide "
                                                      "across a recreated database")
    version = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"catalog {self.token}:{self.version}"
